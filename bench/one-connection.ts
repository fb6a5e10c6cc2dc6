// Latency over one connection, one request at a time (the comparison public gateway benchmarks
// make, against an upstream that answers in 20 ms), for `bun run bench`. Runs in its own
// process like bench/open-loop.ts: `bun bench/one-connection.ts` with the options as JSON on
// stdin, prints the percentiles in milliseconds.
import { type OpenLoopResult, runClient } from './open-loop'

export interface OneConnectionOptions {
  url: string
  headers: Record<string, string>
  body: string
  seconds: number
}

/** Sends requests back to back over one kept-alive connection for `seconds`; the first second is warm-up. */
export function oneConnection(options: OneConnectionOptions): Promise<OpenLoopResult> {
  return runClient<OpenLoopResult>(import.meta.path, options)
}

async function run(options: OneConnectionOptions): Promise<OpenLoopResult> {
  const latencies: number[] = []
  let errors = 0
  let sent = 0
  const started = performance.now()
  const warmUntil = started + 1000
  const end = started + options.seconds * 1000
  while (performance.now() < end) {
    const before = performance.now()
    sent++
    try {
      const response = await fetch(options.url, { method: 'POST', headers: options.headers, body: options.body })
      await response.arrayBuffer()
      if (!response.ok) errors++
    } catch {
      errors++
    }
    if (before >= warmUntil) latencies.push(performance.now() - before)
  }
  latencies.sort((a, b) => a - b)
  const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * quantile))] ?? Number.NaN
  return { p50: at(0.5), p99: at(0.99), errors, sent }
}

if (import.meta.main) {
  const options = JSON.parse(await new Response(Bun.stdin.stream()).text()) as OneConnectionOptions
  console.log(JSON.stringify(await run(options)))
}
