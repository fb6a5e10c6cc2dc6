// What an open upstream stream costs in memory on each transport alone (`bun bench/upstream-memory.ts`):
// a client process opens BENCH_STREAMS streams to the paced mock upstream through fetch or
// through the gateway's own client (src/upstream-http/), reads each as the relay would (fetch's
// body reader; the raw body, piped), and once every stream is open reports its RSS and JavaScript
// heap growth per stream after a full GC. No gateway, no server in the measured process.
import { heapSize } from 'bun:jsc'
import { createUpstreamClient, rawBodyOf } from '../src/upstream-http/client'
import { startProcess } from '../test/support/process'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const MANY_FETCHES = { BUN_CONFIG_MAX_HTTP_REQUESTS: '65535' }

interface Growth {
  kbRss: number
  kbHeap: number
}

/** The client process: opens the streams, waits until all answered, measures, then reads them to the end. */
async function runClient(url: string, transport: string): Promise<void> {
  const client = createUpstreamClient()
  const body = JSON.stringify({ model: 'cheap-upstream', messages: [{ role: 'user', content: 'Say hello.' }], stream: true })
  const init = { method: 'POST', body, headers: { 'content-type': 'application/json' } }
  Bun.gc(true)
  const rssBefore = process.memoryUsage().rss
  const heapBefore = heapSize()
  let open = 0
  const read = async () => {
    const response = transport === 'own' ? await client.fetch(url, init) : await fetch(url, init)
    open++
    const raw = rawBodyOf(response)
    if (raw) await new Promise<void>((resolve) => raw.pipe({ bytes: () => undefined, end: resolve, fail: () => resolve() }))
    else {
      const reader = response.body?.getReader()
      while (reader && !(await reader.read()).done) {}
    }
  }
  const streams: Promise<void>[] = []
  for (let index = 0; index < STREAMS; index++) {
    streams.push(read())
    if (index % 100 === 99) await Bun.sleep(20)
  }
  while (open < STREAMS) await Bun.sleep(20)
  Bun.gc(true)
  const growth: Growth = { kbRss: (process.memoryUsage().rss - rssBefore) / 1024 / STREAMS, kbHeap: (heapSize() - heapBefore) / 1024 / STREAMS }
  console.log(JSON.stringify(growth))
  await Promise.all(streams)
  client.close()
}

async function measure(url: string, transport: 'fetch' | 'own'): Promise<Growth> {
  const child = Bun.spawn(['bun', 'bench/upstream-memory.ts', '--client', url, transport], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...MANY_FETCHES, BENCH_STREAMS: String(STREAMS) },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const output = await new Response(child.stdout).text()
  await child.exited
  return JSON.parse(output.trim().split('\n')[0] ?? '{}') as Growth
}

async function run(): Promise<string> {
  const mock = await startProcess(['bun', 'bench/mock-server.ts'], { ...MANY_FETCHES, BENCH_STREAM_WORDS: '100', BENCH_CHUNK_MS: '50' })
  try {
    const url = `${mock.url}v1/chat/completions`
    const results: Record<'fetch' | 'own', Growth[]> = { fetch: [], own: [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const transport of round % 2 === 0 ? (['fetch', 'own'] as const) : (['own', 'fetch'] as const))
        results[transport].push(await measure(url, transport))
    }
    const range = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`
    return [
      `Upstream transports alone, ${STREAMS.toLocaleString('en-US')} open streams, ${ROUNDS} rounds (\`bun bench/upstream-memory.ts\`, Bun ${Bun.version}):`,
      '',
      '| transport | RSS per open stream | JavaScript heap per open stream |',
      '| --- | --- | --- |',
      `| fetch, body reader | ${range(results.fetch.map((growth) => growth.kbRss))} KB | ${range(results.fetch.map((growth) => growth.kbHeap))} KB |`,
      `| own client, piped body | ${range(results.own.map((growth) => growth.kbRss))} KB | ${range(results.own.map((growth) => growth.kbHeap))} KB |`,
      '',
    ].join('\n')
  } finally {
    await mock.stop()
  }
}

if (import.meta.main) {
  const [flag, url = '', transport = 'own'] = process.argv.slice(2)
  if (flag === '--client') await runClient(url, transport)
  else console.log(await run())
}
