// Latency over one connection, one request at a time (the comparison public gateway benchmarks
// make, against an upstream that answers in 20 ms), for `bun run bench`. Runs in its own
// process like bench/open-loop.ts: `bun bench/one-connection.ts` with the options as JSON on
// stdin, prints the percentiles in milliseconds, one result per target.
//
// The targets take turns, one request each, so every target meets the same moments of this
// shared machine: measured one after another, the bare proxy's own p99 moved by more than a
// millisecond from run to run, which is the whole margin of the target it is compared with.
import { type OpenLoopResult, runClient } from './open-loop'

export interface OneConnectionTarget {
  url: string
  headers: Record<string, string>
  body: string
}

export interface OneConnectionOptions {
  targets: OneConnectionTarget[]
  seconds: number
}

/** Sends requests back to back, each target in turn over its own kept-alive connection, for `seconds`; the first second is warm-up. */
export function oneConnection(options: OneConnectionOptions): Promise<OpenLoopResult[]> {
  return runClient<OpenLoopResult[]>(import.meta.path, options)
}

async function run(options: OneConnectionOptions): Promise<OpenLoopResult[]> {
  const measured = options.targets.map(() => ({ latencies: [] as number[], errors: 0, sent: 0 }))
  const started = performance.now()
  const warmUntil = started + 1000
  const end = started + options.seconds * 1000
  while (performance.now() < end) {
    for (const [index, target] of options.targets.entries()) {
      const tally = measured[index] as (typeof measured)[number]
      const before = performance.now()
      tally.sent++
      try {
        const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body })
        await response.arrayBuffer()
        if (!response.ok) tally.errors++
      } catch {
        tally.errors++
      }
      if (before >= warmUntil) tally.latencies.push(performance.now() - before)
    }
  }
  return measured.map(({ latencies, errors, sent }) => {
    latencies.sort((a, b) => a - b)
    const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * quantile))] ?? Number.NaN
    return { p50: at(0.5), p99: at(0.99), errors, sent }
  })
}

if (import.meta.main) {
  const options = JSON.parse(await new Response(Bun.stdin.stream()).text()) as OneConnectionOptions
  console.log(JSON.stringify(await run(options)))
}
