import { afterAll, afterEach, describe, expect, spyOn, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { DatabaseUnreachableError, waitForDatabase } from '../../src/db/wait-for-database'
import { testDatabases } from '../support/databases'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * A start whose Postgres server is not there (docs/operations.md#postgres): it waits up to
 * TOLLGATE_DB_WAIT_SECONDS, saying so in JSON lines that name the server by host and port only,
 * and connects when the server comes; after the wait, one error line and a non-zero exit.
 */

const MAIN = resolve('src/main.ts')
const PASSWORD = 'pw-Kq81zXv0-never-logged'

/** A loopback port nothing listens on: bound, then released. */
function closedPort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

type Line = Record<string, any>

function parseLines(text: string): Line[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line
      } catch {
        return { unparsed: line }
      }
    })
}

/** A child's output read as JSON lines while it runs, for a test to wait on what it has said so far. */
class LineReader {
  private text = ''
  private readonly done: Promise<void>
  private waiting: (() => void) | undefined

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of stream) {
        this.text += decoder.decode(chunk, { stream: true })
        this.waiting?.()
      }
      this.waiting?.()
    })()
  }

  /** Resolves once the lines so far satisfy `condition`; fails if the stream ends first. */
  async until(condition: (lines: Line[]) => boolean): Promise<void> {
    let ended = false
    void this.done.then(() => {
      ended = true
    })
    while (!condition(parseLines(this.text))) {
      if (ended) throw new Error(`the output ended before the expected lines:\n${this.text}`)
      await new Promise<void>((wake) => {
        this.waiting = wake
        void this.done.then(wake)
      })
    }
  }

  async all(): Promise<Line[]> {
    await this.done
    return parseLines(this.text)
  }
}

const connectionRefused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })

describe('waiting for the database, step by step', () => {
  let logged: Line[] = []
  const spy = spyOn(console, 'error').mockImplementation((line: string) => {
    logged.push(JSON.parse(line))
  })
  afterEach(() => {
    logged = []
    spy.mockClear()
  })
  afterAll(() => spy.mockRestore())

  /** A clock that moves only when the wait sleeps, so no test depends on real time. */
  function fakeTime() {
    let now = 0
    const sleeps: number[] = []
    return {
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms)
        now += ms
      },
      sleeps,
    }
  }

  test('backs off from a quarter second to five seconds, tries last at the deadline, then gives up with the hint', async () => {
    const time = fakeTime()
    let tries = 0
    const failure = await waitForDatabase(`postgres://tollgate:${PASSWORD}@db.internal:6543/billing`, {
      waitMs: 30_000,
      now: time.now,
      sleep: time.sleep,
      probe: async () => {
        tries++
        throw connectionRefused
      },
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(DatabaseUnreachableError)
    expect(time.sleeps).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 2250])
    expect(tries).toBe(11)
    expect((failure as DatabaseUnreachableError).message).toBe('database unreachable: gave up after 30 s and 11 tries (TOLLGATE_DB_WAIT_SECONDS=30)')
    expect((failure as DatabaseUnreachableError).fields).toMatchObject({
      database: { engine: 'postgres', host: 'db.internal', port: 6543, name: 'billing' },
      error: { code: 'ECONNREFUSED' },
      hint: expect.stringContaining('db.internal:6543'),
    })
    expect(logged).toHaveLength(10)
    for (const line of logged) expect(line).toMatchObject({ level: 'warn', time: expect.any(String), hint: expect.stringContaining('DATABASE_URL') })
    expect(JSON.stringify([logged, (failure as DatabaseUnreachableError).fields])).not.toContain(PASSWORD)
  })

  test('a server that answers on the third try: one line says so', async () => {
    const time = fakeTime()
    let tries = 0
    await waitForDatabase('postgres://postgres@127.0.0.1:5432/postgres', {
      waitMs: 30_000,
      now: time.now,
      sleep: time.sleep,
      probe: async () => {
        if (++tries < 3) throw connectionRefused
      },
    })
    expect(logged.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'database unreachable: trying again in 0.3 s'],
      ['warn', 'database unreachable: trying again in 0.5 s'],
      ['info', 'database connected after 3 tries'],
    ])
  })

  test('a wrong password is not waited for: the hint says what to check, without the password', async () => {
    const time = fakeTime()
    const refused = Object.assign(new Error('password authentication failed for user "tollgate"'), { code: '28P01' })
    const failure = await waitForDatabase(`postgres://tollgate:${PASSWORD}@db.internal/billing`, {
      waitMs: 30_000,
      now: time.now,
      sleep: time.sleep,
      probe: async () => {
        throw refused
      },
    }).catch((error: unknown) => error)
    expect(time.sleeps).toEqual([])
    expect(failure).toBeInstanceOf(DatabaseUnreachableError)
    expect((failure as DatabaseUnreachableError).fields.hint).toBe('check the user and password in DATABASE_URL (the server db.internal:5432 refused them)')
    expect(JSON.stringify((failure as DatabaseUnreachableError).fields)).not.toContain(PASSWORD)
  })
})

describe('a start on an unreachable Postgres', () => {
  test('a port nothing listens on: JSON lines with the hint, one error line after the wait, exit 1', async () => {
    const port = closedPort()
    const workdir = mkdtempSync(join(tmpdir(), 'tollgate-db-wait-'))
    try {
      const run = Bun.spawn(['bun', MAIN], {
        cwd: workdir,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          PORT: '0',
          DATABASE_URL: `postgres://tollgate:${PASSWORD}@127.0.0.1:${port}/billing`,
          TOLLGATE_DB_WAIT_SECONDS: '1',
        },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [code, stdout, stderr] = await Promise.all([run.exited, new Response(run.stdout).text(), new Response(run.stderr).text()])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      const lines = parseLines(stderr)
      expect(lines.filter((line) => line.unparsed !== undefined)).toEqual([])
      const waits = lines.filter((line) => line.level === 'warn')
      expect(waits.length).toBeGreaterThanOrEqual(2)
      for (const line of lines) {
        expect(line.time).toEqual(expect.any(String))
        expect(line.database).toEqual({ engine: 'postgres', host: '127.0.0.1', port, name: 'billing' })
        expect(line.hint).toContain(`127.0.0.1:${port}`)
        expect(line.hint).toContain('DATABASE_URL')
      }
      const last = lines.at(-1)
      expect(last).toMatchObject({ level: 'error', error: { code: 'ECONNREFUSED' } })
      expect(last?.message).toStartWith('database unreachable: gave up after 1 s')
      expect(lines.filter((line) => line.level === 'error')).toHaveLength(1)
      expect(stderr).not.toContain(PASSWORD)
      expect(stderr).not.toContain('tollgate:')
    } finally {
      rmSync(workdir, { recursive: true, force: true })
    }
  }, 30_000)

  const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
  test.skipIf(!postgres)(
    'a proxy that starts forwarding later: the start waits, logs one line when it connects, and migrates',
    async () => {
      if (!postgres) return
      const database = await postgres.open({ migrated: false })
      const url = new URL(database.url ?? '')
      const proxy = new TcpProxy(url.hostname, Number(url.port || 5432))
      proxy.port = closedPort()
      try {
        const run = Bun.spawn(['bun', MAIN, 'migrate'], {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: proxy.urlFor(url.toString()), TOLLGATE_DB_WAIT_SECONDS: '60' },
          stdout: 'pipe',
          stderr: 'pipe',
        })
        const stderr = new LineReader(run.stderr)
        const stdoutText = new Response(run.stdout).text()
        // The proxy starts forwarding once the start has said, twice, that it waits.
        await stderr.until((lines) => lines.filter((line) => String(line.message).startsWith('database unreachable')).length >= 2)
        proxy.start()
        expect(await run.exited).toBe(0)
        const lines = await stderr.all()
        const waits = lines.filter((line) => line.message?.startsWith('database unreachable'))
        expect(waits.length).toBeGreaterThanOrEqual(2)
        const connected = lines.filter((line) => String(line.message).startsWith('database connected'))
        expect(connected).toHaveLength(1)
        expect(connected[0]).toMatchObject({ level: 'info', attempts: waits.length + 1, database: { host: '127.0.0.1', port: proxy.port } })
        expect(await stdoutText).toContain('migrations applied')
      } finally {
        proxy.stop()
        await database.close()
      }
    },
    60_000,
  )
})
