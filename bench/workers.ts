// `bun bench/workers.ts`: billed non-streaming chat on Postgres with `serve --workers 1` and
// `--workers 2`, beside the bare proxy as the floor, books checked after each run. Writes the
// "Every core" section of BENCHMARKS.md (docs/operations.md#workers).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { mockCatalogEnv } from '../test/support/mock-catalog'
import { startProcess, type GatewayProcess } from '../test/support/process'
import { checkBooks } from './books'
import { ADMIN, CONNECTIONS, setUpAccount, startGateway, wrk } from './support'

const SECTION = '## Every core'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

interface Row {
  name: string
  rps: number
  p50: number
  p99: number
  errors: number
  books: string
}

export async function benchWorkers(): Promise<string> {
  const started: GatewayProcess[] = []
  const workDir = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-workers-'))
  const server = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} })
  const databases: string[] = []
  try {
    const mock = await startProcess(['bun', 'bench/mock-server.ts'], {})
    started.push(mock)
    const upstream = `${mock.url}v1`
    const rows: Row[] = []

    const bare = await startProcess(['bun', 'bench/bare-proxy.ts'], { UPSTREAM_URL: upstream })
    started.push(bare)
    console.log('measuring the bare proxy ...')
    await wrk({ base: `${bare.url}v1`, key: 'none', model: 'cheap-upstream' }, 2)
    rows.push({ name: 'bare Bun proxy (floor)', ...(await wrk({ base: `${bare.url}v1`, key: 'none', model: 'cheap-upstream' }, SECONDS)), books: '—' })
    await bare.stop()

    for (const workers of [1, 2]) {
      const name = `tollgate_bench_workers_${workers}_${Date.now()}`
      await server.unsafe(`create database ${name}`)
      databases.push(name)
      const url = Object.assign(new URL(POSTGRES_URL), { pathname: `/${name}` }).toString()
      const gateway = await startGateway({ ...mockCatalogEnv(upstream, upstream), DATABASE_URL: url, TOLLGATE_ADMIN_TOKEN: ADMIN }, workDir, [
        '--workers',
        String(workers),
      ])
      started.push(gateway)
      const { key } = await setUpAccount(gateway.url)
      const target = { base: `${gateway.url}v1`, key, model: 'test/cheap' }
      console.log(`measuring Tollgate on Postgres, --workers ${workers} ...`)
      await wrk(target, 2) // warm-up
      const load = await wrk(target, SECONDS)
      await gateway.stop()
      rows.push({ name: `Tollgate, Postgres, --workers ${workers}`, ...load, books: await checkBooks({ kind: 'postgres', url }) })
    }
    return section(rows)
  } finally {
    for (const process of started.reverse()) await process.stop().catch(() => 0)
    for (const name of databases) await server.unsafe(`drop database if exists ${name} with (force)`).catch(() => undefined)
    await server.end()
    rmSync(workDir, { recursive: true, force: true })
  }
}

function section(rows: Row[]): string {
  const floor = rows[0]
  const one = rows.find((row) => row.name.endsWith('--workers 1'))
  const two = rows.find((row) => row.name.endsWith('--workers 2'))
  const ofFloor = (row: Row) => (floor && floor.rps > 0 ? `${Math.round((row.rps / floor.rps) * 100)}%` : '—')
  return [
    SECTION,
    '',
    `Measured by \`bun bench/workers.ts\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, Bun ${Bun.version}; the mock upstream, Postgres, wrk and every gateway process share them.`,
    `Load: wrk, 2 threads, ${CONNECTIONS} connections, ${SECONDS} s per target after a 2 s warm-up, non-streaming chat completions, every Tollgate request authenticated, held, settled and written to the ledger on one wallet. Books: checked after each gateway stopped.`,
    '',
    '| target | requests/s | of floor | p50 | p99 | non-2xx | books |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${Math.round(row.rps)} | ${ofFloor(row)} | ${row.p50.toFixed(2)} ms | ${row.p99.toFixed(2)} ms | ${row.errors} | ${row.books} |`,
    ),
    '',
    one && two && one.rps > 0 ? `Two workers serve ${(two.rps / one.rps).toFixed(2)}× the requests of one.` : '',
    '',
  ].join('\n')
}

/** Puts `text` in BENCHMARKS.md in place of its previous figures, every other section kept as it is. */
export function writeWorkersSection(text: string): void {
  const current = existsSync('BENCHMARKS.md') ? readFileSync('BENCHMARKS.md', 'utf8') : '# Benchmarks\n'
  const kept = current.split(/^(?=## )/m).filter((part) => !part.startsWith(SECTION))
  writeFileSync('BENCHMARKS.md', `${kept.map((part) => part.trimEnd()).join('\n\n')}\n\n${text.trimEnd()}\n`)
}

if (import.meta.main) {
  const text = await benchWorkers()
  writeWorkersSection(text)
  console.log(text)
}
