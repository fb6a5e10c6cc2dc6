// Which upstream transport relays streams cheapest (`bun bench/stream-transports.ts`): the
// streams scenario of bench/streams.ts (same load, same client process, same measures) through
// each candidate, in rounds, the order rotated each round so no candidate always runs first on a
// warm or a busy machine. Candidates: the bare Bun proxy (the floor: fetch's body handed to the
// server untouched), a proxy reading fetch's body in JavaScript, a proxy on the gateway's own
// client (src/upstream-http/), and Tollgate itself on fetch and on its own client
// (TOLLGATE_UPSTREAM_CLIENT), natively and translated. Writes its section of BENCHMARKS.md.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { mockCatalogEnv } from '../test/support/mock-catalog'
import { type GatewayProcess, startProcess } from '../test/support/process'
import { checkBooks } from './books'
import { type Measured, measure, type StreamTarget } from './streams'
import { ADMIN, createDatabase, POSTGRES_URL, setUpAccount, startGateway, writeSection } from './support'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000)
const WORDS = Number(process.env.BENCH_STREAM_WORDS ?? 100)
const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 50)
const MANY_FETCHES = { BUN_CONFIG_MAX_HTTP_REQUESTS: '65535' }

export async function benchStreamTransports(): Promise<string> {
  const workDir = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-transports-'))
  const started: GatewayProcess[] = []
  const databases: { name: string; url: string }[] = []
  let failed = false
  try {
    const mock = await startProcess(['bun', 'bench/mock-server.ts'], { ...MANY_FETCHES, BENCH_STREAM_WORDS: String(WORDS), BENCH_CHUNK_MS: String(CHUNK_MS) })
    started.push(mock)
    const upstream = `${mock.url}v1`
    const proxy = async (script: string) => {
      const process = await startProcess(['bun', script], { ...MANY_FETCHES, UPSTREAM_URL: upstream })
      started.push(process)
      return { pid: process.child.pid, url: process.url, key: 'none', model: 'cheap-upstream' }
    }
    const tollgate = async (client: 'fetch' | 'own') => {
      const database = await createDatabase('tollgate_bench_transports')
      databases.push(database)
      const gateway = await startGateway(
        {
          ...MANY_FETCHES,
          ...mockCatalogEnv(upstream, upstream),
          DATABASE_URL: database.url,
          TOLLGATE_ADMIN_TOKEN: ADMIN,
          TOLLGATE_WORKERS: '1',
          // Holds drawn from a credit lease: fewer statements per stream, so a busy shared
          // machine's database deadlines fail fewer streams; the same for both clients.
          TOLLGATE_CREDIT_LEASE: '5',
          TOLLGATE_UPSTREAM_CLIENT: client,
        },
        workDir,
      )
      started.push(gateway)
      return { pid: gateway.child.pid, url: gateway.url, key: (await setUpAccount(gateway.url, 100_000_000)).key }
    }
    const onFetch = await tollgate('fetch')
    const onOwn = await tollgate('own')
    const targets: StreamTarget[] = [
      { name: 'bare Bun proxy, fetch body passed through (floor)', ...(await proxy('bench/bare-proxy.ts')) },
      { name: 'Bun proxy, fetch body read in JavaScript into a direct stream', ...(await proxy('bench/observing-proxy.ts')) },
      { name: 'Bun proxy, own client (Bun.connect) piped into a direct stream', ...(await proxy('bench/own-client-proxy.ts')) },
      { name: 'Tollgate native, fetch', ...onFetch, model: 'test/cheap' },
      { name: 'Tollgate native, own client', ...onOwn, model: 'test/cheap' },
      { name: 'Tollgate translated (chat → Anthropic format), fetch', ...onFetch, model: 'anthropic/claude-test' },
      { name: 'Tollgate translated (chat → Anthropic format), own client', ...onOwn, model: 'anthropic/claude-test' },
    ]
    const rounds: Measured[][] = []
    for (let round = 0; round < ROUNDS; round++) {
      const results = new Map<string, Measured>()
      // The floor is measured first each round (the ratios are to the same round's floor); the others rotate.
      const [floor, ...rest] = targets
      const order = [floor as StreamTarget, ...rest.slice(round % rest.length), ...rest.slice(0, round % rest.length)]
      for (const target of order) {
        console.error(`stream transports, round ${round + 1}/${ROUNDS}: ${target.name} ...`)
        results.set(target.name, await measure(target))
      }
      rounds.push(targets.map((target) => results.get(target.name) as Measured))
    }
    for (const process of started.splice(1)) await process.stop()
    const books = await Promise.all(databases.map((database) => checkBooks({ kind: 'postgres', url: database.url })))
    return report(targets, rounds, books)
  } catch (error) {
    failed = true
    throw error
  } finally {
    for (const process of started.reverse()) await process.stop().catch(() => 0)
    const server = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} })
    for (const database of databases) await server.unsafe(`drop database if exists ${database.name} with (force)`).catch(() => undefined)
    await server.end()
    // A failed run keeps the gateways' logs for a look.
    if (failed) console.error(`stream transports: the gateways' logs are in ${workDir}`)
    else rmSync(workDir, { recursive: true, force: true })
  }
}

const range = (values: number[], digits: number) => {
  const low = Math.min(...values).toFixed(digits)
  const high = Math.max(...values).toFixed(digits)
  return low === high ? low : `${low}–${high}`
}

/**
 * One row per candidate: ranges over the rounds in which every stream came through intact (a
 * round that lost streams, e.g. to a database deadline on a busy machine, measured less work),
 * and the rounds left out.
 */
function report(targets: StreamTarget[], rounds: Measured[][], books: string[]): string {
  const rows = targets.map((target, index) => {
    const whole = rounds.filter((round) => (round[index] as Measured).client.lost === 0)
    const left = rounds.length - whole.length
    const lost = rounds.flatMap((round) => (round[index] as Measured).client.failures).slice(0, 1)
    const note = left > 0 ? `${left} of ${rounds.length} rounds lost streams${lost[0] ? ` (${lost[0].slice(0, 80)})` : ''}` : ''
    if (whole.length === 0) return `| ${target.name} | — | — | — | ${note} |`
    const cpu = whole.map((round) => (round[index] as Measured).cpuUsPerChunk)
    const ratios = whole.map((round) => (round[index] as Measured).cpuUsPerChunk / (round[0] as Measured).cpuUsPerChunk)
    const memory = whole.map((round) => (round[index] as Measured).kbPerStream)
    return `| ${target.name} | ${range(cpu, 1)} µs | ${index === 0 ? '—' : `${range(ratios, 2)}x`} | ${range(memory, 1)} KB | ${note || `all ${whole.length} rounds intact`} |`
  })
  return [
    '## Stream transports',
    '',
    `Measured by \`bun bench/stream-transports.ts\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Bun ${Bun.version}, local Postgres; the machine shared with other work, so figures are ranges over ${rounds.length} rounds.`,
    `The streams scenario (${STREAMS.toLocaleString('en-US')} concurrent chat streams of ${WORDS} chunks, one every ${CHUNK_MS} ms, from a separate client process) through each candidate, the order rotated each round; "of floor" compares with the bare proxy measured in the same round. CPU per chunk and memory per open stream as in the Streams section; Tollgate in its default configuration (credit leases).`,
    '',
    '| candidate | CPU per chunk | of floor | memory per open stream | rounds |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Books after the run (fetch, own client): ${books.join('; ')}.`,
    '',
  ].join('\n')
}

if (import.meta.main) {
  const section = await benchStreamTransports()
  writeSection(section)
  console.log(section)
}
