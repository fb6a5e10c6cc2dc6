import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type FreshDatabase, testDatabases } from '../support/databases'

/** `tollgate admin …` run as a real process on the database the environment names. */
async function tollgate(env: Record<string, string>, ...args: string[]) {
  const child = Bun.spawn(['bun', 'src/main.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  let json: any
  try {
    json = JSON.parse(stdout)
  } catch {
    json = undefined
  }
  return { code, stdout, stderr, json }
}

for (const kind of testDatabases) {
  describe(`admin CLI on ${kind.kind}`, () => {
    let env: Record<string, string>
    let database: FreshDatabase | undefined
    let dataDir: string | undefined

    beforeAll(async () => {
      // Each command is a process opening its own database: seconds apiece on PGlite.
      if (kind.kind === 'postgres') {
        database = await kind.open({ migrated: false })
        env = { DATABASE_URL: database.url! }
      } else {
        dataDir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'))
        env = { TOLLGATE_DATA_DIR: dataDir }
      }
    })
    afterAll(async () => {
      await database?.close()
      if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    })

    test('creates an account, credits it once per idempotency key, makes a key and reads the ledger', async () => {
      const account = await tollgate(env, 'admin', 'accounts', 'create', '--name', 'Acme CLI')
      expect(account.code).toBe(0)
      expect(account.json).toMatchObject({ name: 'Acme CLI', wallet: { balance: 0 } })
      const id: string = account.json.id

      for (let i = 0; i < 2; i++) {
        const credited = await tollgate(env, 'admin', 'accounts', 'credit', '--id', id, '--amount', '12.5', '--idempotency-key', 'cli-1')
        expect(credited.json).toEqual({ wallet: { balance: 12.5, held: 0, available: 12.5 } })
      }

      const key = await tollgate(env, 'admin', 'keys', 'create', `--account-id=${id}`, '--env', 'dev', '--scopes', 'chat,wallet', '--allotment', '3')
      expect(key.code).toBe(0)
      expect(key.json.key).toStartWith('tollgate_sk_dev_')
      expect(key.json).toMatchObject({ scopes: ['chat', 'wallet'], allotment: { balance: 3 } })

      const ledger = await tollgate(env, 'admin', 'ledger', '--account-id', id)
      expect(ledger.json.data.map((entry: { kind: string; amount: number }) => [entry.kind, entry.amount])).toEqual([
        ['topup', 3],
        ['topup', 12.5],
      ])
    }, 60_000)

    test('lists accounts, updates a key (null clears) and exports the ledger as CSV with exact amounts', async () => {
      const account = await tollgate(env, 'admin', 'accounts', 'create', '--name', 'Report CLI')
      const id: string = account.json.id
      await tollgate(env, 'admin', 'accounts', 'credit', '--id', id, '--amount', '0.000008', '--note', 'tiny, "quoted"')
      const listed = await tollgate(env, 'admin', 'accounts', 'list', '--limit', '1')
      expect(listed.json.data.map((row: { id: string }) => row.id)).toEqual([id])
      expect(listed.stdout).toContain('"balance": 0.000008')
      expect(listed.json.next_cursor).toBeString()

      const key = await tollgate(env, 'admin', 'keys', 'create', '--account-id', id, '--env', 'prod', '--rpm', '5', '--tpm', '100')
      const updated = await tollgate(env, 'admin', 'keys', 'update', '--id', key.json.id, '--rpm', '120', '--tpm', 'null', '--scopes', 'chat,wallet')
      expect(updated.code).toBe(0)
      expect(updated.json).toMatchObject({ id: key.json.id, rpm: 120, tpm: null, scopes: ['chat', 'wallet'] })
      const badUpdate = await tollgate(env, 'admin', 'keys', 'update', '--id', key.json.id, '--rpm', '0')
      expect(badUpdate.code).toBe(2)
      expect(badUpdate.stdout).toContain('--rpm')

      const csv = await tollgate(env, 'admin', 'ledger', '--account-id', id, '--format', 'csv')
      expect(csv.code).toBe(0)
      const lines = csv.stdout.split('\r\n')
      expect(lines[0]).toStartWith('id,created_at,kind,amount,')
      expect(lines[1]).toContain(',topup,0.000008,')
      expect(lines[1]).toEndWith(',0.000000,"tiny, ""quoted"""')
      expect(lines.slice(2)).toEqual([''])
    }, 60_000)

    test('refuses bad input with a message naming the flag, and unknown commands with the usage', async () => {
      const badEnv = await tollgate(env, 'admin', 'keys', 'create', '--account-id', 'acct_x', '--env', 'staging')
      expect(badEnv.code).toBe(2)
      expect(badEnv.stdout).toContain('--env')
      const missing = await tollgate(env, 'admin', 'accounts', 'get', '--id', 'acct_missing')
      expect(missing.code).toBe(1)
      expect(missing.stdout).toContain('acct_missing')
      const unknown = await tollgate(env, 'admin', 'accounts', 'explode')
      expect(unknown.code).toBe(2)
      expect(unknown.stdout).toContain('tollgate admin keys create')
    }, 30_000)

    test("sets a key's spend limits by period, users' own and the default, from JSON flags", async () => {
      const account = await tollgate(env, 'admin', 'accounts', 'create', '--name', 'Limits CLI')
      const key = await tollgate(env, 'admin', 'keys', 'create', '--account-id', account.json.id, '--env', 'prod', '--quotas', '{"day":2,"week":5}')
      expect(key.json).toMatchObject({ quotas: { day: 2, week: 5, month: null }, spent: { day: 0, week: 0, month: 0 } })
      const cleared = await tollgate(env, 'admin', 'keys', 'update', '--id', key.json.id, '--quotas', '{"day":null}', '--monthly-quota', '9')
      expect(cleared.json).toMatchObject({ monthly_quota: 9, quotas: { day: null, week: 5, month: 9 } })
      const own = await tollgate(env, 'admin', 'users', 'quotas', '--iss', 'https://idp.example', '--sub', 'cli-user', '--quotas', '{"month":3}')
      expect(own.json).toMatchObject({ quotas: { day: null, week: null, month: 3 }, quotas_from: 'user' })
      const fallback = await tollgate(env, 'admin', 'users', 'default-quotas', '--quotas', '{"week":1.5}')
      expect(fallback.json).toEqual({ quotas: { day: null, week: 1.5, month: null } })
      expect((await tollgate(env, 'admin', 'users', 'default-quotas', 'get')).json).toEqual(fallback.json)
      const unknown = await tollgate(env, 'admin', 'users', 'default-quotas', '--quotas', '{"hour":1}')
      expect(unknown.code).toBe(2)
      expect(unknown.stdout).toContain('--quotas')
    }, 60_000)
  })
}
