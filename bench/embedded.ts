// The embedded database's start: how long a first start (a fresh TOLLGATE_DATA_DIR) and a
// restart take until /v1/readyz answers 200, and how much memory the gateway holds idle
// afterwards and at its peak, for `bun src/main.ts` and for dist/tollgate when it is built.
// `bun bench/embedded.ts` prints a table; `benchEmbedded()` returns the figures.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { ensureSourceTemplate } from '../scripts/embedded-template'
import { freePort, residentKb, writeSection } from './support'

/** Runs of each command: the machine is shared, so every figure is a range over the runs. */
const RUNS = Number(process.env.BENCH_EMBEDDED_RUNS ?? 3)
/** How long the gateway idles after ready before its resident memory is read. */
const IDLE_MS = Number(process.env.BENCH_EMBEDDED_IDLE_MS ?? 10_000)
const READY_DEADLINE_MS = 120_000

export interface StartFigures {
  readyMs: number
  /** VmRSS of the gateway process, IDLE_MS after ready. */
  idleRssMb: number
  /** VmHWM of the gateway process: the most it ever held resident. */
  peakRssMb: number
  /** The most the gateway and every process below it held together, sampled while starting. */
  peakTreeRssMb: number
}

export interface EmbeddedRun {
  command: string
  first: StartFigures
  restart: StartFigures
}

/** Starts `command` on `dataDir` and measures it until idle; stops it afterwards. */
export async function measureStart(command: string[], dataDir: string): Promise<StartFigures> {
  const port = await freePort()
  const started = performance.now()
  const child = Bun.spawn(command, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), TOLLGATE_DATA_DIR: dataDir, TOLLGATE_DRAIN_SECONDS: '0' },
    stdout: 'ignore',
    // The gateway logs to stderr; its lines would bury the table.
    stderr: 'pipe',
  })
  const log = new Response(child.stderr).text()
  let peakTreeKb = 0
  const sample = () => {
    try {
      peakTreeKb = Math.max(peakTreeKb, residentKb(child.pid))
    } catch {
      // A child that exited between listing and reading.
    }
  }
  try {
    let readyMs = Number.NaN
    while (performance.now() - started < READY_DEADLINE_MS) {
      sample()
      const ok = (await fetch(`http://127.0.0.1:${port}/v1/readyz`).catch(() => undefined))?.ok
      if (ok) {
        readyMs = performance.now() - started
        break
      }
      if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode} before ready:\n${await log}`)
      await Bun.sleep(10)
    }
    if (Number.isNaN(readyMs)) throw new Error(`${command.join(' ')} was not ready within ${READY_DEADLINE_MS} ms`)
    await Bun.sleep(IDLE_MS)
    sample()
    return {
      readyMs,
      idleRssMb: ownKb(child.pid, 'VmRSS') / 1024,
      peakRssMb: ownKb(child.pid, 'VmHWM') / 1024,
      peakTreeRssMb: peakTreeKb / 1024,
    }
  } finally {
    child.kill()
    await child.exited
  }
}

/** One process's own resident memory in KB, without its children. */
function ownKb(pid: number, which: 'VmRSS' | 'VmHWM'): number {
  return Number(new RegExp(`${which}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
}

/** The commands measured: the source always, the compiled binary when `bun run build` made one. */
function commands(): string[][] {
  const list = [['bun', 'src/main.ts']]
  if (existsSync('dist/tollgate')) list.push(['dist/tollgate'])
  return list
}

export async function benchEmbedded(): Promise<EmbeddedRun[]> {
  // From source, a first start reads the template kept in dist/: made here once, not timed.
  await ensureSourceTemplate()
  const runs: EmbeddedRun[] = []
  for (let run = 0; run < RUNS; run++) {
    // Alternating the commands spreads the machine's noise over both.
    for (const command of commands()) {
      const dataDir = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-embedded-'))
      try {
        const first = await measureStart(command, dataDir)
        const restart = await measureStart(command, dataDir)
        runs.push({ command: command.join(' '), first, restart })
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  }
  return runs
}

/** A markdown table of the runs: the range (min to max) of each figure per command. */
export function renderEmbedded(runs: EmbeddedRun[]): string {
  const range = (values: number[], digits: number) => {
    const low = Math.min(...values).toFixed(digits)
    const high = Math.max(...values).toFixed(digits)
    return low === high ? low : `${low}–${high}`
  }
  const lines = [
    '## Embedded database start',
    '',
    `Measured by \`bun bench/embedded.ts\` (part of \`bun run bench\`) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, Bun ${Bun.version}.`,
    `Each command starts on a fresh data directory (first start) and again on the same one (restart), ${RUNS} runs each, alternating; ready is when \`/v1/readyz\` first answers 200, counted from the spawn; idle RSS is read ${IDLE_MS / 1000} s after ready; peak RSS is VmHWM. Ranges are min–max.`,
    '',
    '| command | first start ready (s) | idle RSS after first (MB) | peak RSS first (MB) | peak RSS with children (MB) | restart ready (s) | idle RSS after restart (MB) | peak RSS restart (MB) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const command of [...new Set(runs.map((run) => run.command))]) {
    const mine = runs.filter((run) => run.command === command)
    const pick = (which: 'first' | 'restart', figure: keyof StartFigures) => mine.map((run) => run[which][figure])
    lines.push(
      `| \`${command}\` | ${range(
        pick('first', 'readyMs').map((ms) => ms / 1000),
        2,
      )} | ${range(pick('first', 'idleRssMb'), 0)} | ${range(pick('first', 'peakRssMb'), 0)} | ${range(pick('first', 'peakTreeRssMb'), 0)} | ${range(
        pick('restart', 'readyMs').map((ms) => ms / 1000),
        2,
      )} | ${range(pick('restart', 'idleRssMb'), 0)} | ${range(pick('restart', 'peakRssMb'), 0)} |`,
    )
  }
  const firsts = runs.map((run) => run.first)
  const worstReady = Math.max(...firsts.map((first) => first.readyMs)) / 1000
  const worstIdle = Math.max(...runs.flatMap((run) => [run.first.idleRssMb, run.restart.idleRssMb]))
  const verdict = (met: boolean) => (met ? '**met**' : '**not met**')
  lines.push(
    '',
    `- First start ready ≤ 2 s: slowest ${worstReady.toFixed(2)} s — ${verdict(worstReady <= 2)}.`,
    `- Idle RSS ≤ 200 MB: largest ${worstIdle.toFixed(0)} MB — ${verdict(worstIdle <= 200)}.`,
  )
  return lines.join('\n')
}

if (import.meta.main) {
  const section = renderEmbedded(await benchEmbedded())
  writeSection(section)
  console.log(section)
}
