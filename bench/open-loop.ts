// Latency at a fixed request rate (open loop), for `bun run bench`: requests leave on a schedule
// whether or not earlier ones were answered (those due within the same millisecond together), so
// a slow answer cannot hide the queue behind it (a closed-loop tool like wrk measures queueing at
// saturation instead). Runs in its own process, so its work does not share the event loop of
// whoever starts it: `bun bench/open-loop.ts` with the options as JSON on stdin, prints the result.

export interface OpenLoopOptions {
  url: string
  headers: Record<string, string>
  body: string
  /** Requests per second. */
  rate: number
  seconds: number
}

export interface OpenLoopResult {
  p50: number
  p99: number
  /** Answers that were not 2xx, and requests that failed outright. */
  errors: number
  sent: number
}

/** Runs the schedule in a child process and returns its percentiles in milliseconds. */
export function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  return runClient<OpenLoopResult>(import.meta.path, options)
}

/** Runs a load client script in a process of its own, its options as JSON on stdin, and returns the JSON it prints. */
export async function runClient<Result>(script: string, options: unknown): Promise<Result> {
  const child = Bun.spawn(['bun', script], { stdin: new TextEncoder().encode(JSON.stringify(options)), stdout: 'pipe', stderr: 'inherit' })
  const output = await new Response(child.stdout).text()
  if ((await child.exited) !== 0) throw new Error(`the load client ${script} failed`)
  return JSON.parse(output) as Result
}

async function run(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const latencies: number[] = []
  let errors = 0
  const total = Math.round(options.rate * options.seconds)
  const interval = 1000 / options.rate
  const started = performance.now()
  const inFlight = new Set<Promise<void>>()
  const send = (leftAt: number) => {
    const request = fetch(options.url, { method: 'POST', headers: options.headers, body: options.body })
      .then(async (response) => {
        await response.arrayBuffer()
        if (!response.ok) errors++
        latencies.push(performance.now() - leftAt)
      })
      .catch(() => {
        errors++
      })
      .finally(() => inFlight.delete(request))
    inFlight.add(request)
  }
  let sent = 0
  while (sent < total) {
    const now = performance.now()
    // Everything due by now leaves now, each timed from when it left. The loop wakes once a
    // millisecond (the timers' resolution): waiting for a due time less than that away would spin
    // and take a core from the processes measured on this machine.
    while (sent < total && started + sent * interval <= now) {
      send(performance.now())
      sent++
    }
    await Bun.sleep(Math.max(1, started + sent * interval - performance.now()))
  }
  await Promise.all([...inFlight])
  latencies.sort((a, b) => a - b)
  const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * quantile))] ?? Number.NaN
  return { p50: at(0.5), p99: at(0.99), errors, sent }
}

if (import.meta.main) {
  const options = JSON.parse(await new Response(Bun.stdin.stream()).text()) as OpenLoopOptions
  console.log(JSON.stringify(await run(options)))
}
