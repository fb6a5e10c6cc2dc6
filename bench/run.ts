// `bun run bench`: Tollgate in its default configuration on PGlite and on Postgres, then with
// two workers and with exact holds, beside a bare Bun proxy (the floor) and the Portkey gateway,
// all in front of the same mock upstream: throughput and CPU per request under wrk, latency at a
// fixed open-loop rate, time to first byte; then latency over one connection against an
// upstream that answers in 20 ms. Prints a table and writes BENCHMARKS.md.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { mockCatalogEnv } from '../test/support/mock-catalog'
import { type GatewayProcess, startProcess } from '../test/support/process'
import { checkBooks } from './books'
import { benchEmbedded, renderEmbedded } from './embedded'
import { oneConnection } from './one-connection'
import { openLoop } from './open-loop'
import { benchStreamTransports } from './stream-transports'
import { benchStreams } from './streams'
import { ADMIN, chatBody, cpuSeconds, createDatabase, freePort, residentKb, setUpAccount, startGateway, writeSection } from './support'
import { benchTail } from './tail'
import { benchUsage } from './usage'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const TTFB_SAMPLES = 300
/** The fixed rate latency is measured at (requests per second), well below every Tollgate row's saturation. */
const OPEN_LOOP_RATE = Number(process.env.BENCH_RATE ?? 1000)
/** How long the upstream of the one-connection comparison takes to answer (ms), and how long that comparison runs (s, its targets taking turns). */
const SLOW_UPSTREAM_MS = 20
/** Calls that warm a one-connection target up first (500 a second for 6 s: 3,000, as the 1,000/s warm-up). */
const ONE_CONNECTION_WARM_UP_RATE = 500
const ONE_CONNECTION_WARM_UP_SECONDS = 6
const ONE_CONNECTION_SECONDS = Number(process.env.BENCH_ONE_CONNECTION_SECONDS ?? 90)

interface Target {
  name: string
  gateway: GatewayProcess
  /** Base URL ending in /v1. */
  base: string
  key: string
  model: string
  headers: Record<string, string>
  database?: { kind: 'pglite'; dataDir: string } | { kind: 'postgres'; url: string; name: string }
  accountId?: string
  /** A Tollgate row in its default configuration: the issue's targets are judged on these. */
  isDefault?: boolean
}

interface Result {
  name: string
  rps: number
  /** Microseconds of CPU the target's processes spent per request under wrk. */
  cpuPerRequest: number
  /** Latency at OPEN_LOOP_RATE, milliseconds. */
  p50: number
  p99: number
  errors: number
  ttfb: number
  rssMb: number
  books?: string
  isDefault?: boolean
}

/** Latency over one connection in front of the 20 ms upstream. */
interface SlowResult {
  name: string
  p50: number
  p99: number
  errors: number
  sent: number
}

function need(command: string, hint: string): void {
  if (Bun.spawnSync(['which', command]).exitCode !== 0) {
    console.error(`${command} is missing: ${hint}`)
    process.exit(1)
  }
}

async function wrk(target: Target, seconds: number): Promise<{ rps: number; requests: number; errors: number }> {
  const child = Bun.spawn(['wrk', '-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', 'bench/post.lua', `${target.base}/chat/completions`], {
    env: {
      ...process.env,
      BENCH_BODY: chatBody(target.model, false),
      BENCH_KEY: target.key,
      ...(target.headers['x-portkey-custom-host'] ? { BENCH_CUSTOM_HOST: target.headers['x-portkey-custom-host'] } : {}),
    },
    stdout: 'pipe',
  })
  const output = await new Response(child.stdout).text()
  await child.exited
  const line = (label: string) => output.split('\n').find((candidate) => candidate.trim().startsWith(label)) ?? ''
  return {
    rps: Number(line('Requests/sec:').split(/\s+/).at(-1)),
    requests: Number(/(\d+) requests in/.exec(output)?.[1] ?? 0),
    errors: Number(line('Non-2xx').split(/\s+/).at(-1) ?? 0) || 0,
  }
}

/** Median time to the first streamed byte, one request at a time. */
async function ttfb(target: Target): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < TTFB_SAMPLES; i++) {
    const started = performance.now()
    const response = await fetch(`${target.base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.key}`, ...target.headers },
      body: chatBody(target.model, true),
    })
    const reader = response.body!.getReader()
    await reader.read()
    samples.push(performance.now() - started)
    while (!(await reader.read()).done) {}
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

async function main(): Promise<void> {
  need('wrk', 'apt-get install wrk')
  if (!existsSync('bench/peer/node_modules/@portkey-ai/gateway')) {
    console.log('installing the Portkey gateway into bench/peer ...')
    Bun.spawnSync(['bun', 'install', '--frozen-lockfile'], { cwd: 'bench/peer', stdout: 'inherit', stderr: 'inherit' })
  }

  const mock = await startProcess(['bun', 'bench/mock-server.ts'], {})
  const upstream = `${mock.url}v1`
  const catalog = mockCatalogEnv(upstream, upstream)
  const targets: Target[] = []
  const started: GatewayProcess[] = [mock]
  let workDir: string | undefined
  try {
    const bare = await startProcess(['bun', 'bench/bare-proxy.ts'], { UPSTREAM_URL: upstream })
    started.push(bare)
    targets.push({ name: 'bare Bun proxy (floor)', gateway: bare, base: `${bare.url}v1`, key: 'none', model: 'cheap-upstream', headers: {} })

    workDir = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-'))
    const dataDir = join(workDir, 'data')
    const embedded = await startGateway({ ...catalog, TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ADMIN_TOKEN: ADMIN }, workDir)
    started.push(embedded)
    const embeddedAccount = await setUpAccount(embedded.url)
    targets.push({
      name: 'Tollgate, PGlite (default)',
      isDefault: true,
      gateway: embedded,
      base: `${embedded.url}v1`,
      key: embeddedAccount.key,
      accountId: embeddedAccount.accountId,
      model: 'test/cheap',
      headers: {},
      database: { kind: 'pglite', dataDir },
    })

    // The same without request activity: the difference is what recording every request costs.
    const quietDataDir = join(workDir, 'data-no-activity')
    const quiet = await startGateway(
      { ...catalog, TOLLGATE_DATA_DIR: quietDataDir, TOLLGATE_ADMIN_TOKEN: ADMIN, TOLLGATE_ACTIVITY_RETENTION_DAYS: '0' },
      workDir,
    )
    started.push(quiet)
    const quietAccount = await setUpAccount(quiet.url)
    targets.push({
      name: 'Tollgate, PGlite, no request activity (TOLLGATE_ACTIVITY_RETENTION_DAYS=0)',
      gateway: quiet,
      base: `${quiet.url}v1`,
      key: quietAccount.key,
      accountId: quietAccount.accountId,
      model: 'test/cheap',
      headers: {},
      database: { kind: 'pglite', dataDir: quietDataDir },
    })

    // Each Postgres row has a database of its own, so its books are its own. The default row sets
    // nothing: one process, credit leases.
    const postgresTarget = async (name: string, env: Record<string, string>): Promise<Target> => {
      const database = await createDatabase('tollgate_bench')
      const gateway = await startGateway({ ...catalog, DATABASE_URL: database.url, TOLLGATE_ADMIN_TOKEN: ADMIN, ...env }, workDir ?? os.tmpdir())
      started.push(gateway)
      const account = await setUpAccount(gateway.url)
      return {
        name,
        gateway,
        base: `${gateway.url}v1`,
        key: account.key,
        accountId: account.accountId,
        model: 'test/cheap',
        headers: {},
        database: { kind: 'postgres', ...database },
        isDefault: Object.keys(env).length === 0,
      }
    }
    targets.push(await postgresTarget('Tollgate, Postgres (default)', {}))
    targets.push(
      await postgresTarget('Tollgate, Postgres, no request activity (TOLLGATE_ACTIVITY_RETENTION_DAYS=0)', { TOLLGATE_ACTIVITY_RETENTION_DAYS: '0' }),
    )
    targets.push(await postgresTarget('Tollgate, Postgres, 2 workers', { TOLLGATE_WORKERS: '2' }))
    targets.push(await postgresTarget('Tollgate, Postgres, exact holds (TOLLGATE_CREDIT_LEASE=0)', { TOLLGATE_CREDIT_LEASE: '0' }))
    // Whole answers go through fetch by default (docs/operations.md#how-upstreams-are-reached): this row is the other candidate.
    targets.push(
      await postgresTarget('Tollgate, Postgres, whole answers by the own client (TOLLGATE_UPSTREAM_CLIENT=own)', { TOLLGATE_UPSTREAM_CLIENT: 'own' }),
    )

    const portkeyPort = await freePort()
    const portkey = Bun.spawn(['node', 'bench/peer/node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${portkeyPort}`, '--headless'], {
      stdout: 'ignore',
      stderr: 'ignore',
    })
    const portkeyProcess: GatewayProcess = {
      url: `http://127.0.0.1:${portkeyPort}/`,
      child: portkey,
      stop: async () => {
        portkey.kill()
        return portkey.exited
      },
    }
    started.push(portkeyProcess)
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(portkeyProcess.url).then(
          () => true,
          () => false,
        )
      )
        break
      await Bun.sleep(100)
    }
    targets.push({
      name: 'Portkey gateway 1.15.2',
      gateway: portkeyProcess,
      base: `${portkeyProcess.url}v1`,
      key: 'none',
      model: 'cheap-upstream',
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream },
    })

    const results: Result[] = []
    for (const target of targets) {
      console.log(`measuring ${target.name} ...`)
      // Latency at the fixed rate first, after a warm-up at that rate: measured after a
      // saturating run it would carry that run's after-effects (a grown heap, settlements landing).
      const fixedRateLoad = {
        url: `${target.base}/chat/completions`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.key}`, ...target.headers },
        body: chatBody(target.model, false),
        rate: OPEN_LOOP_RATE,
      }
      await openLoop({ ...fixedRateLoad, seconds: 3 })
      const fixedRate = await openLoop({ ...fixedRateLoad, seconds: SECONDS })
      await wrk(target, 2) // warm-up
      const cpuBefore = cpuSeconds(target.gateway.child.pid)
      const load = await wrk(target, SECONDS)
      const cpuPerRequest = ((cpuSeconds(target.gateway.child.pid) - cpuBefore) / Math.max(1, load.requests)) * 1e6
      results.push({
        name: target.name,
        rps: load.rps,
        cpuPerRequest,
        p50: fixedRate.p50,
        p99: fixedRate.p99,
        errors: load.errors + fixedRate.errors,
        ttfb: await ttfb(target),
        rssMb: residentKb(target.gateway.child.pid, 'VmHWM') / 1024,
        isDefault: target.isDefault,
      })
    }

    for (const [index, target] of targets.entries()) {
      if (!target.database) continue
      await target.gateway.stop()
      results[index]!.books = await checkBooks(target.database)
    }
    const slow = await benchOneConnection(workDir, started)
    report(results, slow)
  } finally {
    for (const process of started.reverse()) await process.stop().catch(() => 0)
    if (workDir) rmSync(workDir, { recursive: true, force: true })
  }
}

/**
 * The bare proxy and Tollgate in its default configuration (Postgres, and PGlite) in front of an
 * upstream that answers in SLOW_UPSTREAM_MS, one request at a time over one connection each,
 * taking turns.
 */
async function benchOneConnection(workDir: string, started: GatewayProcess[]): Promise<SlowResult[]> {
  const slowMock = await startProcess(['bun', 'bench/mock-server.ts'], { BENCH_DELAY_MS: String(SLOW_UPSTREAM_MS) })
  started.push(slowMock)
  const upstream = `${slowMock.url}v1`
  const catalog = mockCatalogEnv(upstream, upstream)
  const bare = await startProcess(['bun', 'bench/bare-proxy.ts'], { UPSTREAM_URL: upstream })
  started.push(bare)
  const database = await createDatabase('tollgate_bench')
  const onPostgres = await startGateway({ ...catalog, DATABASE_URL: database.url, TOLLGATE_ADMIN_TOKEN: ADMIN }, workDir)
  started.push(onPostgres)
  const embedded = await startGateway({ ...catalog, TOLLGATE_DATA_DIR: join(workDir, 'data-one-connection'), TOLLGATE_ADMIN_TOKEN: ADMIN }, workDir)
  started.push(embedded)
  const rows: { name: string; url: string; key: string; model: string }[] = [
    { name: 'bare Bun proxy (floor)', url: bare.url, key: 'none', model: 'cheap-upstream' },
    { name: 'Tollgate, Postgres (default)', url: onPostgres.url, key: (await setUpAccount(onPostgres.url)).key, model: 'test/cheap' },
    { name: 'Tollgate, PGlite (default)', url: embedded.url, key: (await setUpAccount(embedded.url)).key, model: 'test/cheap' },
  ]
  const requests = rows.map((row) => ({
    url: `${row.url}v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${row.key}` },
    body: chatBody(row.model, false),
  }))
  // A process fresh from its start runs its code unoptimised for its first thousand or so
  // calls: each is warmed up with as many as the throughput rows had, as public benchmarks do.
  for (const [index, row] of rows.entries()) {
    console.log(`warming ${row.name} up for the one-connection comparison ...`)
    await openLoop({ ...(requests[index] as (typeof requests)[number]), rate: ONE_CONNECTION_WARM_UP_RATE, seconds: ONE_CONNECTION_WARM_UP_SECONDS })
  }
  console.log(`measuring ${rows.length} targets in turn over one connection each, ${SLOW_UPSTREAM_MS} ms upstream, ${ONE_CONNECTION_SECONDS} s ...`)
  const measured = await oneConnection({ targets: requests, seconds: ONE_CONNECTION_SECONDS })
  return rows.map((row, index) => ({ name: row.name, ...(measured[index] as (typeof measured)[number]) }))
}

/** Sections of BENCHMARKS.md that other benchmarks wrote (`bench/attacks.ts`: "Hostile input"): kept as they are. */
function sectionsOfOthers(): string {
  if (!existsSync('BENCHMARKS.md')) return ''
  const sections = readFileSync('BENCHMARKS.md', 'utf8')
    .split(/^(?=## )/m)
    .slice(1)
  const others = sections.filter((section) => !section.startsWith('## Targets'))
  return others.length > 0 ? `\n${others.join('').trimEnd()}\n` : ''
}

function report(results: Result[], slow: SlowResult[]): void {
  const floor = results[0]!
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
  const ms = (value: number) => `${value.toFixed(2)} ms`
  const rows = results.map((result) => {
    const added = (value: number, base: number) => (result === floor ? '—' : ms(value - base))
    return `| ${result.name} | ${Math.round(result.rps)} | ${result === floor ? '100%' : `${Math.round((result.rps / floor.rps) * 100)}%`} | ${Math.round(result.cpuPerRequest)} µs | ${ms(result.p50)} (${added(result.p50, floor.p50)}) | ${ms(result.p99)} (${added(result.p99, floor.p99)}) | ${ms(result.ttfb)} (${added(result.ttfb, floor.ttfb)}) | ${result.rssMb.toFixed(0)} MB | ${result.errors} | ${result.books ?? '—'} |`
  })
  const verdict = (met: boolean) => (met ? '**met**' : '**not met**')
  const slowFloor = slow[0]!
  const slowRows = slow.map(
    (row) =>
      `| ${row.name} | ${ms(row.p50)} (${row === slowFloor ? '—' : ms(row.p50 - slowFloor.p50)}) | ${ms(row.p99)} (${row === slowFloor ? '—' : ms(row.p99 - slowFloor.p99)}) | ${row.sent} | ${row.errors} |`,
  )
  const targets = results
    .filter((result) => result.isDefault)
    .flatMap((row) => [
      `- ${row.name}:`,
      `  - hot wallet ≥ 5,000 billed requests/s, books exact: ${Math.round(row.rps)}/s, books ${row.books} — ${verdict(row.rps >= 5000 && row.books === 'exact')}`,
      `  - streaming time to first byte added ≤ 1 ms: ${ms(row.ttfb - floor.ttfb)} — ${verdict(row.ttfb - floor.ttfb <= 1)}`,
      `  - at ${OPEN_LOOP_RATE.toLocaleString('en-US')} requests/s, p50 added ≤ 1 ms: ${ms(row.p50 - floor.p50)} — ${verdict(row.p50 - floor.p50 <= 1)}; p99 added ≤ 5 ms: ${ms(row.p99 - floor.p99)} — ${verdict(row.p99 - floor.p99 <= 5)}`,
      ...slow
        .filter((slowRow) => slowRow.name === row.name)
        .map(
          (slowRow) =>
            `  - ${SLOW_UPSTREAM_MS} ms upstream, one connection, p99 added ≤ 1 ms: ${ms(slowRow.p99 - slowFloor.p99)} — ${verdict(slowRow.p99 - slowFloor.p99 <= 1)}`,
        ),
    ])
  const text = [
    '# Benchmarks',
    '',
    `Measured by \`bun run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Bun ${Bun.version}.`,
    `Everything runs on this one machine: the mock upstream, each gateway, Postgres and the load generators share its cores.`,
    `Throughput: wrk, 2 threads, ${CONNECTIONS} connections, ${SECONDS} s per target after a 2 s warm-up, non-streaming chat completions; every Tollgate request is authenticated, held, settled and written to the ledger, all on ONE wallet (the hot-wallet case). CPU per request: the target's processes' user and system time during that run, divided by the requests it answered.`,
    `Latency: an open-loop client (bench/open-loop.ts) sending ${OPEN_LOOP_RATE.toLocaleString('en-US')} requests/s on a fixed schedule whether or not earlier ones were answered, so queueing shows, each timed from when it left (the client wakes once a millisecond and sends what is due: waiting for due times finer than that made it spin and take a whole core from the processes it measures); 3 s of warm-up at that rate, then ${SECONDS} s measured, before the throughput run; "added" is the difference from the bare proxy at the same rate.`,
    `Time to first byte: the median of ${TTFB_SAMPLES} sequential streaming requests. Peak RSS: VmHWM of the target's processes. Books: after the run, every wallet equals its top-ups minus its charges, no hold is open and every hold (a credit lease included) closed exactly once.`,
    `Default rows set nothing beyond the database: one process, credit leases (docs/billing.md#credit-lease); the other Tollgate rows change one setting each.`,
    '',
    `| target | requests/s | of floor | CPU per request | p50 at ${OPEN_LOOP_RATE}/s (added) | p99 at ${OPEN_LOOP_RATE}/s (added) | TTFB (added) | peak RSS | non-2xx | books |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `One connection per target, one request at a time, in front of an upstream that answers in ${SLOW_UPSTREAM_MS} ms (a mock of its own): the targets take turns, one request each, for ${ONE_CONNECTION_SECONDS} s (so each meets the same moments of the machine; measured one after another, the bare proxy's own p99 moved by more than the 1 ms margin from run to run), after ${(ONE_CONNECTION_WARM_UP_RATE * ONE_CONNECTION_WARM_UP_SECONDS).toLocaleString('en-US')} calls of warm-up each at ${ONE_CONNECTION_WARM_UP_RATE}/s; the first second of turns is not counted:`,
    '',
    '| target | p50 (added) | p99 (added) | requests | non-2xx |',
    '| --- | --- | --- | --- | --- |',
    ...slowRows,
    '',
    '## Targets (2-core machine, default configuration)',
    '',
    ...targets,
    '',
  ].join('\n')
  writeFileSync('BENCHMARKS.md', text + sectionsOfOthers())
  console.log(text)
}

/** Which scenarios run (BENCH_SCENARIOS, comma-separated): all of them unless told. */
const scenarios = new Set((process.env.BENCH_SCENARIOS ?? 'gateways,tail,embedded,streams,transports,usage').split(','))
if (scenarios.has('gateways')) await main()
if (scenarios.has('tail')) writeSection(await benchTail())
if (scenarios.has('embedded')) writeSection(renderEmbedded(await benchEmbedded()))
// The tail (bench/tail.ts), embedded start (bench/embedded.ts), long-streams (bench/streams.ts) and usage-summary (bench/usage.ts) scenarios write their own sections.
if (scenarios.has('streams')) writeSection(await benchStreams())
if (scenarios.has('transports')) writeSection(await benchStreamTransports())
if (scenarios.has('usage')) writeSection(await benchUsage())
