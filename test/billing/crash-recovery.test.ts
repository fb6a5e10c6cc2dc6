import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { mockCatalogEnv } from '../support/mock-catalog'
import { type GatewayProcess, startGatewayProcess } from '../support/process'
import { MockUpstream } from '../upstream/mock-upstream'

/** A gateway killed with SIGKILL mid-request: after a restart, its hold is given back. */
describe('crash recovery', () => {
  const upstream = new MockUpstream()
  beforeAll(() => upstream.start())
  afterAll(() => upstream.stop())

  async function setUp(gateway: GatewayProcess) {
    const admin = (path: string, payload?: unknown) =>
      fetch(`${gateway.url}admin/v1${path}`, {
        method: payload ? 'POST' : 'GET',
        headers: bearer(ADMIN_TOKEN),
        body: payload ? JSON.stringify(payload) : undefined,
      }).then((response) => response.json() as Promise<any>)
    const account = await admin('/accounts', { name: 'crash' })
    await admin(`/accounts/${account.id}/credits`, { amount: 1 })
    const { key } = await admin('/keys', { account_id: account.id, env: 'prod' })
    return { accountId: account.id as string, key: key as string }
  }

  async function killMidRequest(gateway: GatewayProcess, key: string) {
    upstream.always({ kind: 'hang' })
    const pending = fetch(`${gateway.url}v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }),
    }).catch(() => undefined)
    for (let i = 0; i < 100 && upstream.received.length === 0; i++) await Bun.sleep(20)
    expect(upstream.received.length).toBe(1)
    await gateway.stop('SIGKILL')
    await pending
    upstream.reset()
  }

  async function walletOf(gateway: GatewayProcess, accountId: string) {
    const response = await fetch(`${gateway.url}admin/v1/accounts/${accountId}`, { headers: bearer(ADMIN_TOKEN) })
    return ((await response.json()) as any).wallet
  }

  test('embedded database: the restarted process releases every open hold at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-crash-'))
    try {
      const env = { ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl), TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN }
      const first = await startGatewayProcess(env)
      const { accountId, key } = await setUp(first)
      await killMidRequest(first, key)
      const second = await startGatewayProcess(env)
      try {
        expect(await walletOf(second, accountId)).toEqual({ balance: 1, held: 0, available: 1 })
        const ledger = (await (await fetch(`${second.url}admin/v1/ledger?account_id=${accountId}`, { headers: bearer(ADMIN_TOKEN) })).json()) as any
        expect(ledger.data.map((entry: { kind: string }) => entry.kind)).toEqual(['expire', 'hold', 'topup'])
      } finally {
        await second.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
  test.skipIf(!postgres)(
    'shared Postgres: another process expires the hold once its owner stops renewing it',
    async () => {
      const database = await postgres!.open()
      try {
        const env = {
          ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl),
          DATABASE_URL: database.url!,
          TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
          TOLLGATE_HOLD_TTL_SECONDS: '1',
        }
        const [doomed, survivor] = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)])
        try {
          const { accountId, key } = await setUp(doomed)
          await killMidRequest(doomed, key)
          // The survivor's sweep runs every quarter TTL; the dead process's hold lapses after one TTL.
          let wallet = await walletOf(survivor, accountId)
          for (let i = 0; i < 100 && wallet.held !== 0; i++) {
            await Bun.sleep(50)
            wallet = await walletOf(survivor, accountId)
          }
          expect(wallet).toEqual({ balance: 1, held: 0, available: 1 })

          // A live process keeps renewing: a call that outlasts the TTL is settled, not expired.
          upstream.always({ delayMs: 2500, usage: { prompt_tokens: 10, completion_tokens: 10 } })
          const slow = await fetch(`${survivor.url}v1/chat/completions`, {
            method: 'POST',
            headers: { ...bearer(key), 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }),
          })
          expect(slow.status).toBe(200)
          // Its hold (a credit lease, the default) was renewed past the TTL and is given back within 2 s of the call.
          wallet = await walletOf(survivor, accountId)
          for (let i = 0; i < 60 && wallet.held !== 0; i++) {
            await Bun.sleep(50)
            wallet = await walletOf(survivor, accountId)
          }
          expect(wallet).toEqual({ balance: 1 - 30 / 1e6, held: 0, available: 1 - 30 / 1e6 })
        } finally {
          await survivor.stop()
        }
      } finally {
        await database.close()
      }
    },
    60_000,
  )
})
