// Helpers the benchmarks share: a gateway process logging to a file, a funded account, wrk.
import { join } from 'node:path'
import type { GatewayProcess } from '../test/support/process'

export const ADMIN = 'bench-admin-token'
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  return port ?? 0
}

/**
 * A gateway writing its logs to a file, as in production: read through a pipe by this process,
 * they would cost the benchmark's own CPU and skew what it measures. `args` follow `serve`.
 */
export async function startGateway(env: Record<string, string>, logDir: string, args: string[] = []): Promise<GatewayProcess> {
  const port = await freePort()
  const child = Bun.spawn(['bun', 'src/main.ts', ...(args.length > 0 ? ['serve', ...args] : [])], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, PORT: String(port) },
    stdout: Bun.file(join(logDir, `gateway-${port}.log`)),
    stderr: 'inherit',
  })
  const url = `http://127.0.0.1:${port}/`
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await fetch(`${url}v1/readyz`).catch(() => undefined))?.ok)
      return {
        url,
        child,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          child.kill(signal)
          return child.exited
        },
      }
    await Bun.sleep(100)
  }
  child.kill()
  throw new Error('a gateway did not become ready')
}

export async function setUpAccount(base: string): Promise<{ key: string; accountId: string }> {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${base}admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify(body) })
    return (await response.json()) as { id: string; key: string }
  }
  const account = await admin('/accounts', { name: 'bench' })
  await admin(`/accounts/${account.id}/credits`, { amount: 1_000_000 })
  const key = await admin('/keys', { account_id: account.id, env: 'prod' })
  return { key: key.key, accountId: account.id }
}

export function chatBody(model: string, stream: boolean): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16, ...(stream ? { stream: true } : {}) })
}

function parseDuration(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text)
  if (!match) return Number.NaN
  const value = Number(match[1])
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value
}

/** Non-streaming chat completions under wrk (2 threads, CONNECTIONS connections) against `base` (ending in /v1). */
export async function wrk(
  target: { base: string; key: string; model: string },
  seconds: number,
): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const child = Bun.spawn(['wrk', '-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', 'bench/post.lua', `${target.base}/chat/completions`], {
    env: { ...process.env, BENCH_BODY: chatBody(target.model, false), BENCH_KEY: target.key },
    stdout: 'pipe',
  })
  const output = await new Response(child.stdout).text()
  await child.exited
  const line = (label: string) => output.split('\n').find((candidate) => candidate.trim().startsWith(label)) ?? ''
  return {
    rps: Number(line('Requests/sec:').split(/\s+/).at(-1)),
    p50: parseDuration(line('50%').trim().split(/\s+/)[1] ?? ''),
    p99: parseDuration(line('99%').trim().split(/\s+/)[1] ?? ''),
    errors: Number(line('Non-2xx').split(/\s+/).at(-1) ?? 0) || 0,
  }
}
