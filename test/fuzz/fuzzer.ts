import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { createApp } from '../../src/app'
import { openConfiguredDatabase } from '../../src/db/open'
import { SERVER_BODY_LIMIT } from '../../src/http/body-limits'
import { isLongRunning } from '../../src/http/long-requests'
import { createServices } from '../../src/services/services'
import { ADMIN_TOKEN, testConfig } from '../support/gateway'
import { mockCatalog, mockCatalogEnv } from '../support/mock-catalog'
import { MockUpstream } from '../upstream/mock-upstream'
import { type Example, examples } from './examples'
import { FAMILIES, type Family, type FuzzRequest, mutate, type Secrets } from './mutations'
import { Random } from './prng'
import { type Answer, send } from './transport'

export interface FuzzOptions {
  seed: number
  /** Requests to send at most. */
  count: number
  /** Stop sending after this long, whatever the count. */
  seconds: number
  /** Requests in flight at once. */
  concurrency?: number
  /** Only these families (default: all). */
  families?: readonly Family[]
  /** Replay only these request indexes of the seed. */
  only?: readonly number[]
  /** The health probe must answer within this. */
  healthBoundMs?: number
  /** A request without an answer after this long is a finding. */
  requestTimeoutMs?: number
  log?: (line: string) => void
}

export interface Finding {
  seed: number
  index: number
  family: Family | 'health' | 'books'
  route: string
  method: string
  path: string
  status: number
  problem: string
  /** The request, shortened, for the report. */
  request: string
  answer: string
}

export interface FuzzReport {
  seed: number
  sent: number
  perRoute: Record<string, number>
  perFamily: Record<string, number>
  statuses: Record<string, number>
  health: { probes: number; p50Ms: number; p99Ms: number; maxMs: number }
  findings: Finding[]
  elapsedMs: number
}

/** Patterns that only a leaked stack or runtime error puts in an answer. */
const INTERNALS = [
  /\bat [\w.<>$]+ \([^)\s]*:\d+:\d+\)/,
  /\n\s+at \S+:\d+:\d+/,
  /[\w/.-]+\.(ts|js|mjs):\d+:\d+/,
  /\/\$bunfs\//,
  /node_modules\//,
  /\b(TypeError|ReferenceError|RangeError|InternalError)\b/,
  /is not a function|Cannot read propert|undefined is not an object|Maximum call stack/,
]

const INTERNALS_SCANNED = 16 * 1024

const shorten = (text: string, length = 300) => {
  const printable = JSON.stringify(text)
  return printable.length > length ? `${printable.slice(0, length)}… (${text.length} chars)` : printable
}

function describeRequest(request: FuzzRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}…` : value}`).join('; ')
  const body = request.body ? new TextDecoder().decode(request.body.subarray(0, 400)) : ''
  return `${request.method} ${shorten(request.path, 120)} via ${request.transport} [${shorten(headers, 300)}] body ${shorten(body, 240)}${request.body && request.body.length > 400 ? ` (${request.body.length} bytes)` : ''}`
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!
}

/**
 * Starts a gateway on loopback (its own embedded database in a temporary directory, an admin
 * token, funded keys, the mock upstream as every provider), sends `count` mutated requests
 * while a probe watches /v1/healthz, then checks every answer and the books.
 */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? (() => {})
  const concurrency = options.concurrency ?? 4
  const healthBoundMs = options.healthBoundMs ?? 2000
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000
  const families = options.families ?? FAMILIES
  const startedAt = performance.now()

  const upstream = new MockUpstream().start()
  upstream.keepRecords = false
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-fuzz-'))
  const database = await openConfiguredDatabase({ dataDir, databaseUrl: undefined })
  const services = createServices({ config: testConfig(mockCatalogEnv(upstream.baseUrl, upstream.baseUrl)), database })
  const gateway = createApp(services, { log: () => {} })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request, bunServer) {
      if (isLongRunning(request)) bunServer.timeout(request, 0)
      return gateway.handle(request)
    },
    idleTimeout: 255,
    maxRequestBodySize: SERVER_BODY_LIMIT,
  })
  const origin = new URL(`http://127.0.0.1:${server.port}`)
  const findings: Finding[] = []
  const perRoute: Record<string, number> = {}
  const perFamily: Record<string, number> = {}
  const statuses: Record<string, number> = {}
  const healthTimes: number[] = []
  let sent = 0

  try {
    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(new URL(`/admin/v1${path}`, origin), {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const json = (await response.json()) as Record<string, string>
      if (response.status >= 300) throw new Error(`fuzz set-up: ${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
      return json
    }
    const funded = await admin('POST', '/accounts', { name: 'fuzz funded' })
    await admin('POST', `/accounts/${funded.id}/credits`, { amount: 1_000_000 })
    const key = await admin('POST', '/keys', { account_id: funded.id, env: 'prod' })
    const adminAccount = await admin('POST', '/accounts', { name: 'fuzz admin target' })
    const adminKey = await admin('POST', '/keys', { account_id: adminAccount.id, env: 'dev' })
    const secrets: Secrets = { key: key.key!, adminToken: ADMIN_TOKEN }
    // What no answer may show, unless the request itself carried it.
    const providerKeys = Object.values(mockCatalog(upstream.baseUrl, upstream.baseUrl).providers).map((provider) => provider.apiKey)
    const secretList = [ADMIN_TOKEN, key.key!, adminKey.key!, 'sk-test', 'sk-ant-test', ...providerKeys]

    const routeExamples = examples({ adminAccountId: adminAccount.id!, adminKeyId: adminKey.id! })
    const served = gateway.endpoints.map((route) => `${route.method} ${route.path}`)
    const byRoute = new Map(routeExamples.map((example) => [example.route, example]))
    // Every route the app serves is fuzzed: a route without an example gets a bare one.
    const targets: Example[] = served.map(
      (route) =>
        byRoute.get(route) ?? { route, method: route.split(' ')[0]!, path: route.split(' ')[1]!.replace(':id', 'x').replace('*', 'x'), credential: 'admin' },
    )
    const unexampled = served.filter((route) => !byRoute.has(route))
    if (unexampled.length) log(`routes without an example (fuzzed from a bare request): ${unexampled.join(', ')}`)

    const build = (index: number): FuzzRequest => {
      const random = Random.forRequest(options.seed, index)
      const example = random.pick(targets)
      const family = random.pick(families)
      return mutate(random, index, example, secrets, family)
    }

    let probing = true
    const probe = (async () => {
      while (probing) {
        const probeStart = performance.now()
        let status = 0
        try {
          status = (await fetch(new URL('/v1/healthz', origin), { signal: AbortSignal.timeout(healthBoundMs * 5) })).status
        } catch {
          status = 0
        }
        const elapsed = performance.now() - probeStart
        healthTimes.push(elapsed)
        if (status !== 200 || elapsed > healthBoundMs) {
          findings.push({
            seed: options.seed,
            index: -1,
            family: 'health',
            route: 'GET /v1/healthz',
            method: 'GET',
            path: '/v1/healthz',
            status,
            problem: `health probe ${status === 200 ? 'slow' : 'failed'}: ${Math.round(elapsed)} ms (bound ${healthBoundMs} ms) after request ${sent}`,
            request: '',
            answer: '',
          })
        }
        await Bun.sleep(100)
      }
    })()

    const indexes = options.only ? [...options.only] : Array.from({ length: options.count }, (_, index) => index)
    const deadline = startedAt + options.seconds * 1000
    let next = 0
    const worker = async () => {
      while (next < indexes.length && performance.now() < deadline) {
        const request = build(indexes[next++]!)
        const answer = await send(origin, request, requestTimeoutMs)
        sent++
        perRoute[request.route] = (perRoute[request.route] ?? 0) + 1
        perFamily[request.family] = (perFamily[request.family] ?? 0) + 1
        const statusKey = answer.status === -1 ? 'not sent' : answer.status === 0 ? 'no answer' : String(answer.status)
        statuses[statusKey] = (statuses[statusKey] ?? 0) + 1
        for (const problem of problemsOf(request, answer, secretList)) {
          findings.push({
            seed: options.seed,
            index: request.index,
            family: request.family,
            route: request.route,
            method: request.method,
            path: request.path,
            status: answer.status,
            problem: `${problem} [${request.note}]`,
            request: describeRequest(request),
            answer: shorten(answer.text, 400),
          })
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    probing = false
    await probe

    // Settlements land in batches: let them, then the books must balance exactly.
    await services.holds.drain(10_000)
    for (const problem of await booksProblems(database.rows.bind(database))) {
      findings.push({ seed: options.seed, index: -1, family: 'books', route: '-', method: '-', path: '-', status: 0, problem, request: '', answer: '' })
    }
  } finally {
    server.stop(true)
    services.close()
    await database.close()
    upstream.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  const sorted = [...healthTimes].sort((a, b) => a - b)
  return {
    seed: options.seed,
    sent,
    perRoute,
    perFamily,
    statuses,
    health: { probes: sorted.length, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0 },
    findings,
    elapsedMs: performance.now() - startedAt,
  }
}

function isStaticAsset(text: string): boolean {
  return /^content-type: (?:text\/javascript|application\/javascript|text\/css|image\/)/im.test(text)
}

function problemsOf(request: FuzzRequest, answer: Answer, secrets: string[]): string[] {
  const problems: string[] = []
  if (answer.status === -1) return problems
  if (answer.status >= 500) problems.push(`status ${answer.status}`)
  if (answer.status === 0) {
    // Bun's server may drop a connection whose framing it cannot parse; over fetch, silence is a failure.
    if (request.transport === 'fetch' || answer.error?.startsWith('no answer')) problems.push(`no answer: ${answer.error ?? 'connection closed'}`)
  }
  // A static asset served as it is (the API docs viewer's script and stylesheet) is third-party
  // text, not an answer the gateway wrote: its words say nothing about the gateway's internals.
  // The head of the answer: a stack trace starts there, and some of these patterns take time
  // that grows with the square of a long run of word characters.
  const head = answer.text.slice(0, INTERNALS_SCANNED)
  const INTERNAL_HIT = isStaticAsset(head) ? undefined : INTERNALS.find((pattern) => pattern.test(head))
  if (INTERNAL_HIT) problems.push(`internals in the answer (${INTERNAL_HIT.source}): ${shorten(INTERNAL_HIT.exec(head)![0], 120)}`)
  const sentText = request.headers.map(([, value]) => value).join('\n') + (request.body ? Buffer.from(request.body).toString('latin1') : '') + request.path
  for (const secret of secrets) {
    if (answer.text.includes(secret) && !sentText.includes(secret)) problems.push(`secret in the answer: ${secret.slice(0, 12)}…`)
  }
  return problems
}

/** The invariants of test/support/ledger-checks.ts, as findings instead of assertions. */
async function booksProblems(rows: <Row>(query: ReturnType<typeof sql>) => Promise<Row[]>): Promise<string[]> {
  const problems: string[] = []
  const check = async (name: string, query: ReturnType<typeof sql>) => {
    const found = await rows<Record<string, unknown>>(query)
    if (found.length) problems.push(`${name}: ${JSON.stringify(found.slice(0, 5))}${found.length > 5 ? ` and ${found.length - 5} more` : ''}`)
  }
  await check('wallet below zero or held negative', sql`select id from wallets where balance < held or held < 0`)
  await check(
    'balance differs from top-ups minus charges',
    sql`select w.id, w.balance::text as balance, coalesce(sum(case when l.kind in ('topup', 'adjustment') then l.amount when l.kind = 'charge' then -l.amount else 0 end), 0)::text as ledger
        from wallets w left join ledger_entries l on l.wallet_id = w.id group by w.id, w.balance
        having w.balance <> coalesce(sum(case when l.kind in ('topup', 'adjustment') then l.amount when l.kind = 'charge' then -l.amount else 0 end), 0)`,
  )
  await check(
    'held differs from open holds',
    sql`select w.id from wallets w left join holds h on h.wallet_id = w.id group by w.id, w.held having w.held <> coalesce(sum(h.amount), 0)`,
  )
  await check('open hold left after the run', sql`select id, wallet_id, amount::text as amount from holds`)
  await check('held not zero after the run', sql`select id, held::text as held from wallets where held <> 0`)
  await check(
    'closed hold not closed exactly once',
    sql`select hold_id from ledger_entries where hold_id is not null and hold_id not in (select id from holds) group by hold_id
        having sum(case when kind = 'hold' then 1 else 0 end) <> 1
            or sum(case when kind in ('charge', 'release', 'expire') then amount else 0 end) <> sum(case when kind = 'hold' then amount else 0 end)`,
  )
  return problems
}

export function formatReport(report: FuzzReport): string {
  const lines: string[] = []
  lines.push(`fuzz seed ${report.seed}: ${report.sent} requests in ${(report.elapsedMs / 1000).toFixed(1)} s`)
  lines.push('requests per route:')
  for (const [route, count] of Object.entries(report.perRoute).sort()) lines.push(`  ${String(count).padStart(5)}  ${route}`)
  lines.push('requests per family:')
  for (const [family, count] of Object.entries(report.perFamily).sort()) lines.push(`  ${String(count).padStart(5)}  ${family}`)
  lines.push(
    `statuses: ${Object.entries(report.statuses)
      .sort()
      .map(([status, count]) => `${status}×${count}`)
      .join('  ')}`,
  )
  lines.push(
    `health: ${report.health.probes} probes, p50 ${report.health.p50Ms.toFixed(1)} ms, p99 ${report.health.p99Ms.toFixed(1)} ms, max ${report.health.maxMs.toFixed(1)} ms`,
  )
  lines.push(`findings: ${report.findings.length}`)
  for (const finding of report.findings.slice(0, 200)) {
    lines.push(`- [${finding.family}] ${finding.route} → ${finding.status}: ${finding.problem}`)
    if (finding.index >= 0) {
      lines.push(`    replay: bun run fuzz --seed ${finding.seed} --only ${finding.index}`)
      lines.push(`    request: ${finding.request}`)
      lines.push(`    answer: ${finding.answer}`)
    }
  }
  if (report.findings.length > 200) lines.push(`… and ${report.findings.length - 200} more`)
  return lines.join('\n')
}
