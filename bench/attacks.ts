// `bun bench/attacks.ts`: hostile requests against a gateway process (embedded database in a
// temp directory, or a fresh database on the Postgres server of DATABASE_URL; loopback only) while a separate prober process asks GET /v1/healthz every 10 ms.
// Prints, per attack, healthz p50, p99 and max during it, the gateway's peak RSS (VmHWM, reset before
// each attack) and the statuses the attack was answered with. Bounded: about a minute in all.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { Jimp } from 'jimp'
import postgres from 'postgres'
import { mockCatalogEnv } from '../test/support/mock-catalog'
import { type GatewayProcess, startProcess } from '../test/support/process'

const ADMIN = 'bench-admin-token'

if (process.argv[2] === 'probe') {
  await probe(process.argv[3]!, Number(process.argv[4]))
  process.exit(0)
}

/** The prober: sequential healthz requests for `durationMs`, latencies printed as JSON. */
async function probe(url: string, durationMs: number): Promise<void> {
  const latencies: number[] = []
  const until = performance.now() + durationMs
  while (performance.now() < until) {
    const started = performance.now()
    const response = await fetch(`${url}v1/healthz`)
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    await Bun.sleep(10)
  }
  console.log(JSON.stringify(latencies))
}

interface Measured {
  attack: string
  statuses: string
  p50: number
  p99: number
  /** The slowest healthz answer: a stall of the event loop shows here even when too few probes meet it to move p99. */
  max: number
  samples: number
  peakMb: number
  /** Peak RSS above the RSS the attack started from. */
  growthMb: number
  note?: string
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
}

/** Linux resets a process's VmHWM to its current RSS when 5 is written to clear_refs. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

function counted(statuses: (number | string)[]): string {
  const counts = new Map<string, number>()
  for (const status of statuses) counts.set(String(status), (counts.get(String(status)) ?? 0) + 1)
  return [...counts].map(([status, count]) => `${status} ×${count}`).join(', ')
}

/** Runs `attack` while the prober runs, and measures. The attack must finish within `durationMs`. */
/** `bun bench/attacks.ts image`: only the attacks whose name contains the word (and the baseline). */
const only = process.argv[2]?.toLowerCase()

async function measure(
  gateway: GatewayProcess,
  name: string,
  durationMs: number,
  attack: () => Promise<{ statuses: (number | string)[]; note?: string }>,
): Promise<Measured> {
  const pid = gateway.child.pid
  if (only && !name.toLowerCase().includes(only) && !name.startsWith('baseline'))
    return { attack: name, statuses: 'skipped', p50: Number.NaN, p99: Number.NaN, max: Number.NaN, samples: 0, peakMb: Number.NaN, growthMb: Number.NaN }
  const peakReset = resetPeak(pid)
  const startMb = statusMb(pid, 'VmRSS')
  const prober = Bun.spawn(['bun', import.meta.path, 'probe', gateway.url, String(durationMs)], { stdout: 'pipe', stderr: 'inherit' })
  // The prober's own start-up is not part of the measurement.
  await Bun.sleep(300)
  const outcome = await attack()
  const latencies = (JSON.parse(await new Response(prober.stdout).text()) as number[]).sort((a, b) => a - b)
  await prober.exited
  const result = {
    attack: name,
    statuses: counted(outcome.statuses),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1) ?? Number.NaN,
    samples: latencies.length,
    peakMb: statusMb(pid, 'VmHWM'),
    growthMb: Math.max(0, statusMb(pid, 'VmHWM') - startMb),
    note: [outcome.note, peakReset ? undefined : 'VmHWM could not be reset: peak since start'].filter(Boolean).join('; ') || undefined,
  }
  console.log(
    `\n### ${name}\n\n| healthz p50 | healthz p99 | healthz max | samples | peak RSS (above start) | answers |\n| --- | --- | --- | --- | --- | --- |`,
  )
  console.log(
    `| ${result.p50.toFixed(1)} ms | ${result.p99.toFixed(1)} ms | ${result.max.toFixed(0)} ms | ${result.samples} | ${result.peakMb.toFixed(0)} MB (+${result.growthMb.toFixed(0)} MB) | ${result.statuses || '—'} |`,
  )
  if (result.note) console.log(`\n${result.note}`)
  return result
}

/**
 * Repeats `request` from `concurrency` loops until `durationMs` has passed, each loop pausing
 * `pauseMs` between its requests. With a pause this is the attack of the issue (a couple of
 * hostile requests at a time), not a flood: volume is the rate limiter's business.
 */
async function repeat(concurrency: number, durationMs: number, request: () => Promise<number | string>, pauseMs = 100): Promise<(number | string)[]> {
  const statuses: (number | string)[] = []
  const until = performance.now() + durationMs
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        statuses.push(await request().catch((error: unknown) => `error: ${error instanceof Error ? error.message : String(error)}`))
        if (pauseMs) await Bun.sleep(pauseMs)
      }
    }),
  )
  return statuses
}

/** A PNG declaring 12000 x 12000 with a real IDAT of compressed zero rows. */
function imageBomb(): Uint8Array {
  const crc = (data: Uint8Array) => Bun.hash.crc32(data)
  const chunk = (type: string, data: Uint8Array) => {
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const out = Buffer.alloc(8 + data.length + 4)
    out.writeUInt32BE(data.length, 0)
    typed.copy(out, 4)
    out.writeUInt32BE(crc(typed), 8 + data.length)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(12_000, 0)
  header.writeUInt32BE(12_000, 4)
  header.set([8, 2, 0, 0, 0], 8)
  // 12,000 rows of 36,001 bytes (filter byte and RGB); zeros compress to about 410 KB.
  const pixels = deflateSync(Buffer.alloc(12_000 * 36_001), { level: 9 })
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', new Uint8Array()),
  ])
}

/** A `width` x `height` JPEG with detail everywhere, as a camera would make: a full decode's work. */
async function photo(width: number, height: number): Promise<Uint8Array> {
  const image = new Jimp({ width, height })
  const pixels = image.bitmap.data
  let seed = 7
  for (let index = 0; index < width * height; index++) {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0
    const x = index % width
    const y = Math.floor(index / width)
    pixels.set([(x / 8 + (seed & 31)) & 255, (y / 8 + ((seed >> 5) & 31)) & 255, ((x ^ y) / 16 + ((seed >> 10) & 31)) & 255, 255], index * 4)
  }
  return image.getBuffer('image/jpeg', { quality: 85 })
}

/** A multipart body of `parts` tiny parts, streamed in 64 KiB chunks with no Content-Length. */
function hugeForm(parts: number): ReadableStream<Uint8Array> {
  const part = Buffer.from('--x\r\nContent-Disposition: form-data; name="f"\r\n\r\n0123456789012345678901234567890123456789\r\n')
  const perChunk = Math.floor(65_536 / part.length)
  const chunk = Buffer.concat(Array.from({ length: perChunk }, () => part))
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= parts) {
        controller.enqueue(Buffer.from('--x--\r\n'))
        controller.close()
        return
      }
      controller.enqueue(chunk)
      sent += perChunk
    },
  })
}

/**
 * `clients` raw connections each sending headers for a 1 MB body and then one byte every
 * `intervalMs`, for at most `durationMs`. Returns what each got back and when its connection closed.
 */
async function trickle(
  url: URL,
  key: string,
  clients: number,
  intervalMs: number,
  durationMs: number,
): Promise<{ statuses: (number | string)[]; note: string }> {
  const started = performance.now()
  const closedAt: number[] = []
  const answers: (number | string)[] = []
  const sockets = await Promise.all(
    Array.from({ length: clients }, () => {
      let received = ''
      let answered = false
      return Bun.connect({
        hostname: url.hostname,
        port: Number(url.port),
        socket: {
          data(_socket, data) {
            received += Buffer.from(data).toString('latin1')
            if (!answered && received.includes('\r\n')) {
              answered = true
              answers.push(Number(received.split(' ')[1]))
            }
          },
          close() {
            closedAt.push(performance.now() - started)
            if (!answered) answers.push('closed without an answer')
          },
          error() {},
        },
      }).then((socket) => {
        socket.write(
          `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`,
        )
        return socket
      })
    }),
  )
  const timer = setInterval(() => {
    for (const socket of sockets) if (socket.readyState === 1) socket.write(' ')
  }, intervalMs)
  while (performance.now() - started < durationMs && closedAt.length < clients) await Bun.sleep(100)
  clearInterval(timer)
  const stillOpen = clients - closedAt.length
  for (const socket of sockets) socket.end()
  closedAt.sort((a, b) => a - b)
  for (let index = answers.length; index < clients; index++) answers.push('still waiting')
  return {
    statuses: answers,
    note: `${clients - stillOpen} of ${clients} connections closed by the gateway, the first after ${((closedAt[0] ?? Number.NaN) / 1000).toFixed(1)} s and the last after ${((closedAt.at(-1) ?? Number.NaN) / 1000).toFixed(1)} s; ${stillOpen} still open after ${(durationMs / 1000).toFixed(0)} s.`,
  }
}

/** The gateway's database: a fresh one on DATABASE_URL's server when it is set, else embedded in `workDir`. */
async function benchDatabase(workDir: string): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL
  if (!serverUrl) return { env: { TOLLGATE_DATA_DIR: join(workDir, 'data') }, drop: async () => {} }
  const name = `tollgate_attacks_${Date.now()}`
  const server = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await server.unsafe(`create database ${name}`)
  const url = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString()
  return {
    // One process: the peak memory and latency measured are one process's (TOLLGATE_WORKERS).
    env: { DATABASE_URL: url, TOLLGATE_WORKERS: '1' },
    drop: async () => {
      await server.unsafe(`drop database if exists ${name} with (force)`)
      await server.end()
    },
  }
}

async function main(): Promise<void> {
  const mock = await startProcess(['bun', 'bench/mock-server.ts'], {})
  const upstream = `${mock.url}v1`
  const workDir = mkdtempSync(join(os.tmpdir(), 'tollgate-attacks-'))
  let gateway: GatewayProcess | undefined
  let cleanUp = async () => {}
  try {
    const database = await benchDatabase(workDir)
    cleanUp = database.drop
    const env = { ...mockCatalogEnv(upstream, upstream), ...database.env, TOLLGATE_ADMIN_TOKEN: ADMIN }
    // The first start creates the database (the embedded one's initdb peaks near 1 GB); measure
    // a gateway started on a database that exists, as it runs in production.
    await (await startProcess(['bun', 'src/main.ts'], env)).stop()
    gateway = await startProcess(['bun', 'src/main.ts'], env)
    const base = gateway.url
    const admin = async (path: string, body: unknown) => {
      const response = await fetch(`${base}admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify(body) })
      return (await response.json()) as { id: string; key: string }
    }
    const keyOn = async (credits: number) => {
      const account = await admin('/accounts', { name: `attacks ${credits}` })
      if (credits) await admin(`/accounts/${account.id}/credits`, { amount: credits })
      return (await admin('/keys', { account_id: account.id, env: 'prod' })).key
    }
    const broke = await keyOn(0)
    const funded = await keyOn(1_000)
    const post = async (path: string, key: string | undefined, body: BodyInit, contentType = 'application/json') => {
      const response = await fetch(`${base}${path.slice(1)}`, {
        method: 'POST',
        headers: { 'content-type': contentType, ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body,
      })
      await response.arrayBuffer()
      return response.status
    }

    const results: Measured[] = []
    results.push(await measure(gateway, 'baseline: no attack', 2_000, async () => ({ statuses: [] })))

    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    results.push(
      await measure(gateway, 'deep JSON (100k `[`, zero-credit key), 2 at a time for 3 s', 3_500, async () => ({
        statuses: await repeat(2, 3_000, () => post('/v1/chat/completions', broke, deep)),
      })),
    )
    results.push(
      await measure(gateway, 'deep JSON flood: 2 loops without pause for 3 s', 3_500, async () => ({
        statuses: await repeat(2, 3_000, () => post('/v1/chat/completions', broke, deep), 0),
      })),
    )

    const bombPng = imageBomb()
    const video = JSON.stringify({ model: 'test/sora', prompt: 'a cat', image: `data:image/png;base64,${Buffer.from(bombPng).toString('base64')}` })
    results.push(
      await measure(
        gateway,
        `image bomb (${Math.round(bombPng.length / 1024)} KB PNG declaring 12000x12000, family B), 2 at a time for 3 s`,
        3_500,
        async () => ({
          statuses: await repeat(2, 3_000, () => post('/v1/videos/generations', funded, video)),
        }),
      ),
    )

    // count_tokens is free: a zero-credit key may send it the largest body there is.
    const prompt = () => {
      const sentence = 'The lighthouse keeper watched the boat turn toward the island, put down her tea and went to find her coat. '
      return JSON.stringify({ model: 'claude-test', messages: [{ role: 'user', content: sentence.repeat(Math.ceil(28_000_000 / sentence.length)) }] })
    }
    results.push(
      await measure(gateway, 'count_tokens, 28 MB prompts, one zero-credit key, 2 at a time for 3 s', 3_500, async () => {
        const body = prompt()
        return { statuses: await repeat(2, 3_000, () => post('/v1/messages/count_tokens', broke, body)) }
      }),
    )
    results.push(
      await measure(
        gateway,
        'count_tokens, 28 MB prompts, a fresh zero-credit key per request (no per-key limit bites), 2 at a time for 3 s',
        3_500,
        async () => {
          const body = prompt()
          const keys = await Promise.all(Array.from({ length: 40 }, () => keyOn(0)))
          return {
            statuses: await repeat(2, 3_000, () => post('/v1/messages/count_tokens', keys.pop(), body)),
            note: 'Each request still costs the event loop its body: about 200 ms for 28 MB (depth check, UTF-8 decode and JSON.parse in src/http/json-body.ts); the estimate at most some 17 ms.',
          }
        },
      ),
    )

    results.push(
      await measure(gateway, 'reference image: 6 valid 2048x2048 JPEGs on videos at once', 12_000, async () => {
        const jpeg = await photo(2048, 2048)
        const body = JSON.stringify({ model: 'test/sora', prompt: 'a cat', image: `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}` })
        return {
          statuses: await Promise.all(Array.from({ length: 6 }, () => post('/v1/videos/generations', funded, body).catch((error: unknown) => String(error)))),
          note: `A ${Math.round(jpeg.length / 1024)} KB JPEG, each scaled and cropped to 1280x720 before the (mock) job is submitted.`,
        }
      }),
    )

    results.push(
      await measure(gateway, 'chunked multipart, 900k parts (61 MB), no credential, 2 at a time for 3 s', 3_500, async () => ({
        statuses: await repeat(2, 3_000, () => post('/v1/audio/transcriptions', undefined, hugeForm(900_000), 'multipart/form-data; boundary=x')),
      })),
    )
    results.push(
      await measure(gateway, 'chunked multipart, 900k parts (61 MB), with a key, 2 at a time for 3 s', 3_500, async () => ({
        statuses: await repeat(2, 3_000, () => post('/v1/audio/transcriptions', funded, hugeForm(900_000), 'multipart/form-data; boundary=x')),
      })),
    )

    results.push(
      await measure(gateway, '300 clients trickling a JSON body, 1 byte per 5 s, with a key', 16_000, () => trickle(new URL(base), funded, 300, 5_000, 15_000)),
    )

    console.log(
      '\n## Summary\n\n| attack | healthz p50 | healthz p99 | healthz max | peak RSS (above start) | answers |\n| --- | --- | --- | --- | --- | --- |',
    )
    for (const result of results)
      console.log(
        `| ${result.attack} | ${result.p50.toFixed(1)} ms | ${result.p99.toFixed(1)} ms | ${result.max.toFixed(0)} ms | ${result.peakMb.toFixed(0)} MB (+${result.growthMb.toFixed(0)} MB) | ${result.statuses || '—'} |`,
      )
    console.log(`\n${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Bun ${Bun.version}, ${new Date().toISOString().slice(0, 10)}.`)
  } finally {
    await gateway?.stop().catch(() => 0)
    await mock.stop().catch(() => 0)
    await cleanUp()
    rmSync(workDir, { recursive: true, force: true })
  }
}

await main()
