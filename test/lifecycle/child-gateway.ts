import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const MAIN = resolve('src/main.ts')
export const ADMIN_TOKEN = 'lifecycle-admin-token-0123456789'

/** One JSON line the gateway wrote, on stdout or stderr. */
export type LogLine = Record<string, any>

/**
 * `bun src/main.ts` as operators run it, in its own working directory (no ./tollgate.json, its
 * own embedded database), with both output streams read line by line so tests can wait for a
 * phase of the start, a reload or a shutdown.
 */
export class ChildGateway {
  readonly lines: LogLine[] = []
  private waiters: { match: (line: LogLine) => boolean; found: (line: LogLine) => void }[] = []
  private constructor(
    readonly child: ReturnType<typeof Bun.spawn<'ignore', 'pipe', 'pipe'>>,
    readonly workdir: string,
    private readonly ownsWorkdir: boolean,
  ) {}

  url = ''

  static async start(env: Record<string, string>, workdir?: string, args: string[] = []): Promise<ChildGateway> {
    const directory = workdir ?? mkdtempSync(join(tmpdir(), 'tollgate-lifecycle-'))
    const child = Bun.spawn(['bun', MAIN, ...args], {
      cwd: directory,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const gateway = new ChildGateway(child, directory, workdir === undefined)
    void gateway.read(child.stdout)
    void gateway.read(child.stderr)
    const listening = await Promise.race([
      gateway.waitFor((line) => line.message === 'listening', 60_000),
      child.exited.then((code) => {
        throw new Error(`the gateway exited ${code} before listening:\n${gateway.lines.map((line) => JSON.stringify(line)).join('\n')}`)
      }),
    ])
    gateway.url = listening.url.replace(/\/$/, '')
    return gateway
  }

  /** The first line (already written or to come) that matches. */
  waitFor(match: (line: LogLine) => boolean, timeoutMs = 20_000): Promise<LogLine> {
    const seen = this.lines.find(match)
    if (seen) return Promise.resolve(seen)
    return new Promise((found, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`no matching log line within ${timeoutMs} ms; lines:\n${this.lines.map((line) => JSON.stringify(line)).join('\n')}`)),
        timeoutMs,
      )
      this.waiters.push({
        match,
        found: (line) => {
          clearTimeout(timer)
          found(line)
        },
      })
    })
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal)
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.url}${path}`, init)
  }

  async admin(method: string, path: string, body?: unknown): Promise<any> {
    const response = await this.fetch(`/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${await response.text()}`)
    return response.json()
  }

  /** A funded account and one of its keys. */
  async fundedKey(credits: number): Promise<{ accountId: string; key: string }> {
    const account = await this.admin('POST', '/accounts', { name: 'lifecycle' })
    await this.admin('POST', `/accounts/${account.id}/credits`, { amount: credits })
    const key = await this.admin('POST', '/keys', { account_id: account.id, env: 'prod' })
    return { accountId: account.id, key: key.key }
  }

  /** Stops the process for good (a test that failed half-way) and removes its directory. */
  dispose(): void {
    this.child.kill('SIGKILL')
    if (this.ownsWorkdir) rmSync(this.workdir, { recursive: true, force: true })
  }

  private async read(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder()
    let pending = ''
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true })
      let end = pending.indexOf('\n')
      while (end >= 0) {
        this.take(pending.slice(0, end))
        pending = pending.slice(end + 1)
        end = pending.indexOf('\n')
      }
    }
  }

  private take(text: string): void {
    let line: LogLine
    try {
      line = JSON.parse(text)
    } catch {
      line = { text }
    }
    this.lines.push(line)
    const waiting = this.waiters
    this.waiters = []
    for (const waiter of waiting) {
      if (waiter.match(line)) waiter.found(line)
      else this.waiters.push(waiter)
    }
  }
}

/** A chat completion request body. */
export function chat(model: string, stream = false): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream })
}

/** Runs `tollgate admin …` on a stopped gateway's embedded database and returns the parsed answer. */
export function adminCli(workdir: string, args: string[]): any {
  const run = Bun.spawnSync(['bun', MAIN, 'admin', ...args], { cwd: workdir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } })
  if (run.exitCode !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.exitCode}: ${run.stderr.toString()}`)
  return JSON.parse(run.stdout.toString())
}

/**
 * A config file whose one provider is the mock upstream at `baseUrl`, serving test/cheap at
 * 1000 credits per million input tokens and 2000 per million output: costs large enough to see.
 */
/** What is left of a response body, as text, once it ends. */
export async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return text + decoder.decode()
    text += decoder.decode(value, { stream: true })
  }
}

export function writeLifecycleCatalog(baseUrl: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tollgate-lifecycle-config-')), 'tollgate.json')
  writeFileSync(
    path,
    JSON.stringify({
      providers: { up: { api: 'openai', baseUrl, apiKey: 'sk-upstream', responsesApi: false } },
      models: [{ id: 'test/cheap', type: 'chat', routes: [{ provider: 'up', model: 'cheap' }], pricing: { input: 1000, output: 2000 }, maxOutputTokens: 1000 }],
    }),
  )
  return path
}
