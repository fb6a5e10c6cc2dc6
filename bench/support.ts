// Helpers the benchmarks share: a gateway process logging to a file, a fresh Postgres database,
// a funded account, and what /proc says a process tree has used.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import type { GatewayProcess } from '../test/support/process'

export const ADMIN = 'bench-admin-token'
export const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  return port ?? 0
}

/**
 * A gateway writing its logs to a file, as in production: read through a pipe by this process,
 * they would cost the benchmark's own CPU and skew what it measures.
 */
export async function startGateway(env: Record<string, string>, logDir: string): Promise<GatewayProcess> {
  const port = await freePort()
  const child = Bun.spawn(['bun', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TOLLGATE_DRAIN_SECONDS: '0', ...env, PORT: String(port) },
    stdout: Bun.file(join(logDir, `gateway-${port}.log`)),
    stderr: 'inherit',
  })
  const url = `http://127.0.0.1:${port}/`
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await fetch(`${url}v1/readyz`).catch(() => undefined))?.ok)
      return {
        url,
        child,
        stop: async () => {
          child.kill()
          return child.exited
        },
      }
    await Bun.sleep(100)
  }
  throw new Error('a gateway did not become ready')
}

/** A fresh database on the local Postgres server, for one benchmark row's books alone. */
export async function createDatabase(prefix: string): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
  const server = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} })
  try {
    await server.unsafe(`create database ${name}`)
  } finally {
    await server.end()
  }
  return { name, url: Object.assign(new URL(POSTGRES_URL), { pathname: `/${name}` }).toString() }
}

/**
 * Vacuums and analyses a benchmark's Postgres database when the server runs without autovacuum
 * (as the test machines' does), standing in for the autovacuum a production server runs: without
 * it, the holds of exact-hold rows pile up as dead rows, and plans made while the tables were
 * empty scan them whole, slowing a row down by the minute. True when it vacuumed.
 */
export async function vacuumWithoutAutovacuum(url: string): Promise<boolean> {
  const connection = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [setting] = await connection<{ autovacuum: string }[]>`show autovacuum`
    if (setting?.autovacuum === 'on') return false
    await connection.unsafe('vacuum analyze')
    return true
  } finally {
    await connection.end()
  }
}

/** An account with `credits` in its wallet and a key on it. */
export async function setUpAccount(base: string, credits = 1_000_000): Promise<{ key: string; accountId: string }> {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${base}admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify(body) })
    return (await response.json()) as { id: string; key: string }
  }
  const account = await admin('/accounts', { name: 'bench' })
  await admin(`/accounts/${account.id}/credits`, { amount: credits })
  const key = await admin('/keys', { account_id: account.id, env: 'prod' })
  return { key: key.key, accountId: account.id }
}

/** A process and every process below it (a gateway's workers). */
export function processTree(pid: number): number[] {
  const tree = [pid]
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) tree.push(...processTree(Number(child)))
    }
  } catch {
    // A process that exited meanwhile has no children left.
  }
  return tree
}

/** CPU seconds (user and system) a process and every process below it have used. */
export function cpuSeconds(pid: number): number {
  let ticks = 0
  for (const id of processTree(pid)) {
    const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0)
  }
  return ticks / 100
}

/** Resident memory of a process and its workers, summed, in KB: now (VmRSS) or at its peak (VmHWM). */
export function residentKb(pid: number, which: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  let kb = 0
  for (const id of processTree(pid)) kb += Number(new RegExp(`${which}:\\s+(\\d+)`).exec(readFileSync(`/proc/${id}/status`, 'utf8'))?.[1] ?? 0)
  return kb
}

/**
 * Writes one `## ` section of BENCHMARKS.md (its text starts with its heading), replacing the
 * section of that heading and keeping every other as it is.
 */
export function writeSection(section: string): void {
  const heading = section.split('\n', 1)[0] ?? ''
  const text = existsSync('BENCHMARKS.md') ? readFileSync('BENCHMARKS.md', 'utf8') : '# Benchmarks\n'
  const kept = text.split(/^(?=## )/m).filter((part) => part.split('\n', 1)[0] !== heading)
  writeFileSync('BENCHMARKS.md', `${kept.map((part) => part.trimEnd()).join('\n\n')}\n\n${section.trimEnd()}\n`)
}

export function chatBody(model: string, stream: boolean): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16, ...(stream ? { stream: true } : {}) })
}
