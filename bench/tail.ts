// Where the p99 goes (also `bun bench/tail.ts` alone): Tollgate in its default configuration on
// Postgres at a fixed open-loop 1,000 requests/s, beside the bare proxy in the same run, with
// JavaScriptCore's GC log on (BUN_JSC_logGC) and the gateway's own request log and metrics read
// afterwards. It splits the client's p99 into what the gateway saw (its request log: the time
// from a request's arrival to its last byte, and the upstream's share of it), the garbage
// collector's pauses, the billing batches' database time and the event loop's lag, and writes
// its own section of BENCHMARKS.md.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { mockCatalogEnv } from '../test/support/mock-catalog'
import { type GatewayProcess, startProcess } from '../test/support/process'
import { type OpenLoopResult, openLoop } from './open-loop'
import { ADMIN, chatBody, createDatabase, freePort, setUpAccount, writeSection } from './support'

const RATE = Number(process.env.BENCH_RATE ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const SECTION = '## Where the p99 goes'

interface GcLog {
  collections: number
  full: number
  pauseTotalMs: number
  pauseMaxMs: number
  /** Pauses of 1 ms or more. */
  longPauses: number
}

/** The collections of a JSC GC log (`BUN_JSC_logGC=1`): one `END` line each, with its pause time `p=`. */
export function readGcLog(text: string): GcLog {
  const log: GcLog = { collections: 0, full: 0, pauseTotalMs: 0, pauseMaxMs: 0, longPauses: 0 }
  for (const line of text.split('\n')) {
    if (!line.includes(' END]')) continue
    const pause = Number(/p=([0-9.]+)ms/.exec(line)?.[1] ?? 0)
    log.collections++
    if (/FullCollection/.test(line)) log.full++
    log.pauseTotalMs += pause
    log.pauseMaxMs = Math.max(log.pauseMaxMs, pause)
    if (pause >= 1) log.longPauses++
  }
  return log
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN
}

/** The gateway's own view of each billed request from its request log: total and upstream time. */
function requestLogTimes(text: string, since: number): { gateway: number[]; own: number[] } {
  const gateway: number[] = []
  const own: number[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"time"') || !line.includes('"route":"/v1/chat/completions"')) continue
    const entry = JSON.parse(line) as { time: string; duration_ms: number; attempts: { duration_ms: number }[] }
    if (Date.parse(entry.time) < since) continue
    gateway.push(entry.duration_ms)
    own.push(entry.duration_ms - entry.attempts.reduce((sum, attempt) => sum + attempt.duration_ms, 0))
  }
  gateway.sort((a, b) => a - b)
  own.sort((a, b) => a - b)
  return { gateway, own }
}

/** A histogram's mean and the share of observations above `bound` seconds, from the Prometheus text. */
function histogram(metrics: string, name: string, label: string): { count: number; meanMs: number } {
  const count = Number(new RegExp(`^${name}_count\\{${label}\\} ([0-9.e+-]+)`, 'm').exec(metrics)?.[1] ?? 0)
  const sum = Number(new RegExp(`^${name}_sum\\{${label}\\} ([0-9.e+-]+)`, 'm').exec(metrics)?.[1] ?? 0)
  return { count, meanMs: count > 0 ? (sum / count) * 1000 : 0 }
}

export async function benchTail(): Promise<string> {
  const workDir = mkdtempSync(join(os.tmpdir(), 'tollgate-tail-'))
  const started: GatewayProcess[] = []
  try {
    const mock = await startProcess(['bun', 'bench/mock-server.ts'], {})
    started.push(mock)
    const upstream = `${mock.url}v1`
    const bare = await startProcess(['bun', 'bench/bare-proxy.ts'], { UPSTREAM_URL: upstream })
    started.push(bare)

    const port = await freePort()
    const database = await createDatabase('tollgate_tail')
    const gcLogPath = join(workDir, 'gc.log')
    const requestLogPath = join(workDir, 'requests.log')
    const child = Bun.spawn(['bun', 'src/main.ts'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...mockCatalogEnv(upstream, upstream),
        DATABASE_URL: database.url,
        TOLLGATE_ADMIN_TOKEN: ADMIN,
        TOLLGATE_DRAIN_SECONDS: '0',
        PORT: String(port),
        BUN_JSC_logGC: '1',
      },
      stdout: Bun.file(requestLogPath),
      stderr: Bun.file(gcLogPath),
    })
    const url = `http://127.0.0.1:${port}/`
    started.push({
      url,
      child,
      stop: async () => {
        child.kill()
        return child.exited
      },
    })
    for (let attempt = 0; attempt < 200 && !(await fetch(`${url}v1/readyz`).catch(() => undefined))?.ok; attempt++) await Bun.sleep(50)
    const account = await setUpAccount(url)

    const load = (base: string, key: string, model: string, seconds: number): Promise<OpenLoopResult> =>
      openLoop({
        url: `${base}v1/chat/completions`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: chatBody(model, false),
        rate: RATE,
        seconds,
      })
    await load(bare.url, 'none', 'cheap-upstream', 3)
    const floor = await load(bare.url, 'none', 'cheap-upstream', SECONDS)
    await load(url, account.key, 'test/cheap', 3)
    const gcBefore = readGcLog(readFileSync(gcLogPath, 'utf8'))
    const metricsBefore = await (await fetch(`${url}metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text()
    const since = Date.now()
    const measured = await load(url, account.key, 'test/cheap', SECONDS)
    const metricsAfter = await (await fetch(`${url}metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text()
    child.kill()
    await child.exited

    const gcAll = readGcLog(readFileSync(gcLogPath, 'utf8'))
    const gc: GcLog = {
      collections: gcAll.collections - gcBefore.collections,
      full: gcAll.full - gcBefore.full,
      pauseTotalMs: gcAll.pauseTotalMs - gcBefore.pauseTotalMs,
      pauseMaxMs: gcAll.pauseMaxMs,
      longPauses: gcAll.longPauses - gcBefore.longPauses,
    }
    const seen = requestLogTimes(readFileSync(requestLogPath, 'utf8'), since)
    const batches = (metrics: string) => histogram(metrics, 'tollgate_billing_batch_duration_seconds', 'operation="settle"')
    const [settleBefore, settleAfter] = [batches(metricsBefore), batches(metricsAfter)]
    const settleCount = settleAfter.count - settleBefore.count
    const lag = Number(/^tollgate_event_loop_lag_seconds(?:\{\})? ([0-9.e+-]+)/m.exec(metricsAfter)?.[1] ?? 0) * 1000
    const ms = (value: number) => `${value.toFixed(2)} ms`
    const windowMs = SECONDS * 1000
    return [
      SECTION,
      '',
      `Measured by \`bun bench/tail.ts\` (part of \`bun run bench\`) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, Bun ${Bun.version}, local Postgres.`,
      `Tollgate in its default configuration on Postgres and the bare proxy, each at a fixed open-loop ${RATE.toLocaleString('en-US')} requests/s for ${SECONDS} s after 3 s of warm-up; the gateway runs with JavaScriptCore's GC log on (\`BUN_JSC_logGC=1\`, which itself costs a little).`,
      '',
      '| measure | value |',
      '| --- | --- |',
      `| bare proxy, client p50 / p99 | ${ms(floor.p50)} / ${ms(floor.p99)} |`,
      `| Tollgate, client p50 / p99 (added) | ${ms(measured.p50)} / ${ms(measured.p99)} (${ms(measured.p50 - floor.p50)} / ${ms(measured.p99 - floor.p99)}) |`,
      `| Tollgate's own request log: arrival to last byte, p50 / p99 | ${ms(quantile(seen.gateway, 0.5))} / ${ms(quantile(seen.gateway, 0.99))} (${seen.gateway.length} requests) |`,
      `| the same less the upstream attempt (the gateway's own work and waits), p50 / p99 | ${ms(quantile(seen.own, 0.5))} / ${ms(quantile(seen.own, 0.99))} |`,
      `| garbage collections during the run (full) | ${gc.collections} (${gc.full}) |`,
      `| GC pause: total, share of the run, longest, pauses ≥ 1 ms | ${ms(gc.pauseTotalMs)}, ${((gc.pauseTotalMs / windowMs) * 100).toFixed(2)}%, ${ms(gc.pauseMaxMs)}, ${gc.longPauses} |`,
      `| settle batches (charges written) and their mean database time | ${settleCount}, ${ms(settleCount > 0 ? (settleAfter.meanMs * settleAfter.count - settleBefore.meanMs * settleBefore.count) / settleCount : 0)} |`,
      `| event-loop lag at the end (probe every 500 ms) | ${ms(lag)} |`,
      `| non-2xx | ${measured.errors} |`,
      '',
    ].join('\n')
  } finally {
    for (const process of started.reverse()) await process.stop().catch(() => 0)
    rmSync(workDir, { recursive: true, force: true })
  }
}

if (import.meta.main) writeSection(await benchTail())
