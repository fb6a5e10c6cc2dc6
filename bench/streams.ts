// The long-streams scenario (also `bun bench/streams.ts` alone): many concurrent paced streams
// through the bare proxy and through Tollgate on Postgres, in the same run, measuring what the
// gateway process spends per relayed chunk and per open stream. Writes its own section of
// BENCHMARKS.md and keeps the others as they are. `bun bench/streams.ts --client` is the load
// generator it spawns: a separate process, so reading the streams costs the gateway nothing.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { mockCatalogEnv } from '../test/support/mock-catalog'
import { type GatewayProcess, startProcess } from '../test/support/process'
import { checkBooks } from './books'
import { ADMIN, cpuSeconds, createDatabase, POSTGRES_URL, residentKb, setUpAccount, startGateway, writeSection } from './support'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000)
const WORDS = Number(process.env.BENCH_STREAM_WORDS ?? 100)
const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 50)
/** Upstream events per stream: the role chunk, one per word, the finish chunk, the usage chunk, [DONE]. */
const EVENTS_PER_STREAM = WORDS + 4
const SECTION = '## Streams'
/** Lets every process here (gateway, proxy, client) hold thousands of fetches at once. */
const MANY_FETCHES = { BUN_CONFIG_MAX_HTTP_REQUESTS: '65535' }

export interface StreamTarget {
  name: string
  pid: number
  url: string
  key: string
  model: string
}

export interface ClientReport {
  intact: number
  lost: number
  failures: string[]
}

export interface Measured {
  name: string
  cpuUsPerChunk: number
  kbPerStream: number
  seconds: number
  client: ClientReport
}

function runClientProcess(target: StreamTarget, streams: number) {
  return Bun.spawn(['bun', 'bench/streams.ts', '--client'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...MANY_FETCHES,
      BENCH_URL: `${target.url}v1/chat/completions`,
      BENCH_KEY: target.key,
      BENCH_MODEL: target.model,
      BENCH_STREAMS: String(streams),
      BENCH_STREAM_WORDS: String(WORDS),
    },
    stdout: 'pipe',
    stderr: 'inherit',
  })
}

/**
 * Runs the client process against one target: CPU of the target over the whole run, divided by
 * the chunks relayed; RSS sampled while every stream is open (after the client says all are
 * open, before it sees the first one end), minus the RSS before.
 */
export async function measure(target: StreamTarget): Promise<Measured> {
  // A first small round warms the code paths up, so the figures are of the steady state.
  const warmUp = runClientProcess(target, Math.min(STREAMS, 100))
  await new Response(warmUp.stdout).text()
  await warmUp.exited
  await Bun.sleep(1000)
  Bun.gc(true)
  const rssBefore = residentKb(target.pid)
  const cpuBefore = cpuSeconds(target.pid)
  const started = performance.now()
  const client = runClientProcess(target, STREAMS)
  let allOpen = false
  let anyClosed = false
  let peakOpenRss = 0
  const sampler = setInterval(() => {
    if (allOpen && !anyClosed) peakOpenRss = Math.max(peakOpenRss, residentKb(target.pid))
  }, 100)
  let report: ClientReport = { intact: 0, lost: STREAMS, failures: ['the client reported nothing'] }
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of client.stdout) {
    pending += decoder.decode(chunk, { stream: true })
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline)
      pending = pending.slice(newline + 1)
      if (line === 'open') {
        allOpen = true
        peakOpenRss = Math.max(peakOpenRss, residentKb(target.pid))
      } else if (line === 'closing') anyClosed = true
      else if (line.startsWith('{')) report = JSON.parse(line) as ClientReport
    }
  }
  await client.exited
  clearInterval(sampler)
  const seconds = (performance.now() - started) / 1000
  const cpuUs = (cpuSeconds(target.pid) - cpuBefore) * 1e6
  return {
    name: target.name,
    cpuUsPerChunk: cpuUs / (STREAMS * EVENTS_PER_STREAM),
    kbPerStream: peakOpenRss > 0 ? (peakOpenRss - rssBefore) / STREAMS : Number.NaN,
    seconds,
    client: report,
  }
}

export async function benchStreams(): Promise<string> {
  const workDir = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-streams-'))
  const started: GatewayProcess[] = []
  const databases: { name: string; url: string }[] = []
  try {
    const mock = await startProcess(['bun', 'bench/mock-server.ts'], { ...MANY_FETCHES, BENCH_STREAM_WORDS: String(WORDS), BENCH_CHUNK_MS: String(CHUNK_MS) })
    started.push(mock)
    const upstream = `${mock.url}v1`
    const bare = await startProcess(['bun', 'bench/bare-proxy.ts'], { ...MANY_FETCHES, UPSTREAM_URL: upstream })
    started.push(bare)
    const observing = await startProcess(['bun', 'bench/observing-proxy.ts'], { ...MANY_FETCHES, UPSTREAM_URL: upstream })
    started.push(observing)
    // One process each (the relay's cost per chunk is a process's), exact holds and a credit lease.
    const tollgate = async (env: Record<string, string>) => {
      const database = await createDatabase('tollgate_bench_streams')
      databases.push(database)
      const gateway = await startGateway(
        { ...MANY_FETCHES, ...mockCatalogEnv(upstream, upstream), DATABASE_URL: database.url, TOLLGATE_ADMIN_TOKEN: ADMIN, TOLLGATE_WORKERS: '1', ...env },
        workDir,
      )
      started.push(gateway)
      return { pid: gateway.child.pid, url: gateway.url, key: (await setUpAccount(gateway.url, 10_000_000)).key }
    }
    // The default configuration (credit leases, the own upstream client), and one with every call held exactly.
    const byDefault = await tollgate({})
    const exact = await tollgate({ TOLLGATE_CREDIT_LEASE: '0' })
    const targets: StreamTarget[] = [
      { name: 'bare Bun proxy (floor)', pid: bare.child.pid, url: bare.url, key: 'none', model: 'cheap-upstream' },
      {
        name: 'observing Bun proxy (reads each chunk in JavaScript, changes nothing)',
        pid: observing.child.pid,
        url: observing.url,
        key: 'none',
        model: 'cheap-upstream',
      },
      { name: 'Tollgate, Postgres (default), native (chat → OpenAI format)', ...byDefault, model: 'test/cheap' },
      { name: 'Tollgate, Postgres, exact holds, native', ...exact, model: 'test/cheap' },
      { name: 'Tollgate, Postgres (default), translated (chat → Anthropic format)', ...byDefault, model: 'anthropic/claude-test' },
    ]
    const results: Measured[] = []
    for (const target of targets) {
      console.error(`streams bench: ${target.name} ...`)
      results.push(await measure(target))
    }
    for (const process of started.splice(3)) await process.stop()
    const books = (await Promise.all(databases.map((database) => checkBooks({ kind: 'postgres', url: database.url })))).every((verdict) => verdict === 'exact')
    return report(results, books ? 'exact' : 'NOT exact')
  } finally {
    for (const process of started.reverse()) await process.stop().catch(() => 0)
    const server = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} })
    for (const database of databases) await server.unsafe(`drop database if exists ${database.name} with (force)`).catch(() => undefined)
    await server.end()
    rmSync(workDir, { recursive: true, force: true })
  }
}

function report(results: Measured[], books: string): string {
  const [floor] = results
  if (!floor) throw new Error('no results')
  const natives = results.filter((result) => result.name.includes('native') || result.name.startsWith('observing'))
  const rows = results.map((result) => {
    const ratio = result === floor ? '—' : `${(result.cpuUsPerChunk / floor.cpuUsPerChunk).toFixed(2)}x`
    const lost = result.client.lost > 0 ? ` (${result.client.failures.slice(0, 2).join('; ')})` : ''
    return `| ${result.name} | ${result.cpuUsPerChunk.toFixed(2)} µs | ${ratio} | ${result.kbPerStream.toFixed(1)} KB | ${result.client.intact}/${STREAMS}${lost} | ${result.seconds.toFixed(1)} s |`
  })
  return [
    SECTION,
    '',
    `Measured by \`bun bench/streams.ts\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Bun ${Bun.version}, local Postgres.`,
    `${STREAMS.toLocaleString('en-US')} concurrent chat streams of ${WORDS} content chunks, one every ${CHUNK_MS} ms (${EVENTS_PER_STREAM} upstream events each, the usage chunk asked for by the client), opened within about a second by a separate client process, through each target in turn, in front of the same paced mock upstream.`,
    `The size keeps the bare proxy well below one core (${Math.round((STREAMS * EVENTS_PER_STREAM) / ((WORDS * CHUNK_MS) / 1000)).toLocaleString('en-US')} chunks/s at the peak) on a machine where the mock upstream, the client and Postgres share the same two cores; the issue's 5,000 streams of 200 chunks at 20 ms (250k chunks/s) saturate even the bare proxy here.`,
    "CPU per chunk: the target process's utime+stime (/proc) over the whole run (one process each), divided by the upstream events relayed (Tollgate's includes each request's authentication, hold and settlement). Memory per stream: the process's RSS while every stream is open, minus its RSS before, divided by the streams. Intact: the client saw every content chunk, the usage chunk and [DONE].",
    '',
    '| target | CPU per chunk | of floor | memory per open stream | streams intact | run |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...natives.flatMap((native) => {
      const ratio = native.cpuUsPerChunk / floor.cpuUsPerChunk
      return [
        `- ${native.name}: CPU per chunk ≤ 1.5x the bare proxy: ${ratio.toFixed(2)}x — **${ratio <= 1.5 ? 'met' : 'not met'}**; memory ≤ 20 KB per open stream: ${native.kbPerStream.toFixed(1)} KB — **${native.kbPerStream <= 20 ? 'met' : 'not met'}**.`,
      ]
    }),
    `- No stream lost: ${results.every((result) => result.client.lost === 0) ? 'met' : 'not met'}. Books after the run: ${books}.`,
    '',
  ].join('\n')
}

/**
 * The client: opens every stream within about a second, reads each with a raw reader, says
 * "open" once all have answered and "closing" when the first ends, then prints what it saw.
 */
async function runClient(): Promise<void> {
  const url = process.env.BENCH_URL ?? ''
  const body = JSON.stringify({
    model: process.env.BENCH_MODEL,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 500,
    stream: true,
    stream_options: { include_usage: true },
  })
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${process.env.BENCH_KEY}` }
  let answered = 0
  let closed = 0
  const failures: string[] = []
  const one = async (): Promise<boolean> => {
    const response = await fetch(url, { method: 'POST', headers, body })
    if (++answered === STREAMS) console.log('open')
    if (!response.body || response.status !== 200) {
      failures.push(`status ${response.status}: ${(await response.text()).slice(0, 200)}`)
      return false
    }
    const parts: Uint8Array[] = []
    const reader = response.body.getReader()
    for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value)
    if (++closed === 1) console.log('closing')
    const text = new TextDecoder().decode(Buffer.concat(parts))
    const words = text.split('"content":"word').length - 1
    const intact = text.endsWith('data: [DONE]\n\n') && text.includes('"choices":[],') && text.includes('"usage":{') && words === WORDS
    if (!intact) failures.push(`${words} words, ends ${JSON.stringify(text.slice(-120))}`)
    return intact
  }
  const runs: Promise<boolean>[] = []
  for (let opened = 0; opened < STREAMS; opened += 100) {
    for (let index = opened; index < Math.min(STREAMS, opened + 100); index++)
      runs.push(
        one().catch((error) => {
          failures.push(String(error))
          return false
        }),
      )
    await Bun.sleep(40)
  }
  const outcomes = await Promise.all(runs)
  const intact = outcomes.filter(Boolean).length
  console.log(JSON.stringify({ intact, lost: STREAMS - intact, failures: failures.slice(0, 5) } satisfies ClientReport))
}

if (import.meta.main) {
  if (process.argv.includes('--client')) await runClient()
  else {
    const section = await benchStreams()
    writeSection(section)
    console.log(section)
  }
}
