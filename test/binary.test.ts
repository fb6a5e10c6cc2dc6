import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/**
 * The compiled single binary, run where nothing of the project is on disk: PGlite's wasm and
 * data files and the migrations must all be inside it.
 */
const binary = resolve('dist/tollgate')
const adminToken = 'binary-test-admin-token'

describe('compiled binary', () => {
  let workdir: string
  let child: ReturnType<typeof Bun.spawn> | undefined

  beforeAll(async () => {
    const build = Bun.spawnSync(['bun', 'run', 'build'], { stdout: 'pipe', stderr: 'pipe' })
    if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
    workdir = mkdtempSync(join(tmpdir(), 'tollgate-binary-'))
  }, 120_000)
  afterAll(() => {
    child?.kill('SIGKILL')
    rmSync(workdir, { recursive: true, force: true })
  })

  test('serves from an empty directory: admin API creates an account and key, the key reads its wallet', async () => {
    child = Bun.spawn([binary], {
      cwd: workdir,
      env: { PATH: process.env.PATH ?? '', PORT: '0', TOLLGATE_ADMIN_TOKEN: adminToken },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const base = await listeningUrl(child.stdout as ReadableStream<Uint8Array>)
    const admin = (path: string, body: unknown) =>
      fetch(`${base}admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: JSON.stringify(body) }).then(
        (response) => response.json() as Promise<any>,
      )

    const account = await admin('/accounts', { name: 'binary' })
    await admin(`/accounts/${account.id}/credits`, { amount: 7.25 })
    const key = await admin('/keys', { account_id: account.id, env: 'prod' })
    const wallet = await fetch(`${base}v1/wallet`, { headers: { authorization: `Bearer ${key.key}` } })
    expect(wallet.status).toBe(200)
    expect(wallet.headers.get('x-request-id')).toStartWith('req_')
    expect(await wallet.json()).toMatchObject({ object: 'wallet', balance: 7.25, available: 7.25, payer: 'wallet' })
    expect(existsSync(join(workdir, 'data', 'PG_VERSION'))).toBe(true)

    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)

    // What was committed survives the restart; the CLI reads it from the same embedded database.
    const ledger = Bun.spawnSync([binary, 'admin', 'ledger', '--account-id', account.id], { cwd: workdir, env: { PATH: process.env.PATH ?? '' } })
    expect(ledger.exitCode).toBe(0)
    expect(JSON.parse(ledger.stdout.toString()).data).toMatchObject([{ kind: 'topup', amount: 7.25 }])
  }, 120_000)
})

/**
 * Reads the server's stdout until its "listening" line and returns the URL. The rest is drained
 * in the background: a closed pipe would kill the server at its next log line.
 */
async function listeningUrl(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader()
  const decoder = new TextDecoder()
  let seen = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the binary exited without listening:\n${seen}`)
    seen += decoder.decode(value, { stream: true })
    const line = seen.split('\n').find((candidate) => candidate.includes('"listening"'))
    if (line) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return JSON.parse(line).url
    }
  }
}
