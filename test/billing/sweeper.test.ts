import { describe, expect, spyOn, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { NO_QUOTAS } from '../../src/billing/periods'
import { queryRows } from '../../src/db/rows'
import { createServices } from '../../src/services/services'
import { testDatabases } from '../support/databases'
import { flaky } from '../support/flaky-database'
import { testConfig } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

const HOLD_MICROS = 1000

/**
 * The sweep gives back holds nobody will close (docs/billing.md#the-sweep): any number of them, in
 * bounded pages, and it keeps going after a failure. Only holds a live call needs are renewed.
 */
for (const kind of testDatabases) {
  describe(`hold sweeper (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)

    const rows = <Row>(query: ReturnType<typeof sql>) => queryRows<Row>(suite.database.db, query)

    /** `count` open holds of a process that is gone, written as the hold statement writes them, already past their expiry. */
    async function abandonedHolds(count: number, expired = true) {
      const { id: keyId, accountId } = await suite.harness.key()
      const [wallet] = await rows<{ id: string }>(sql`select id from wallets where owner_id = ${accountId} and kind = 'wallet'`)
      const month = new Date().toISOString().slice(0, 7)
      const expiresAt = expired ? sql`now() - interval '10 minutes'` : sql`now() + interval '10 minutes'`
      const prefix = `hold_${keyId.slice(4, 12)}_`
      await rows(sql`
        insert into holds (id, request_id, wallet_id, payer_type, account_id, key_id, env, amount, model, route, instance_id, month, created_at, expires_at)
        select ${prefix} || g, 'req_' || g, ${wallet!.id}, 'wallet', ${accountId}, ${keyId}, 'prod', ${HOLD_MICROS}, 'test/cheap', 'a', 'inst_gone', ${month}, now(), ${expiresAt}
        from generate_series(1, ${count}::int) g`)
      await rows(sql`
        insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, env, request_id, hold_id, model, route)
        select 'hold', ${HOLD_MICROS}, ${wallet!.id}, 'wallet', ${accountId}, ${keyId}, 'prod', 'req_' || g, ${prefix} || g, 'test/cheap', 'a'
        from generate_series(1, ${count}::int) g`)
      await rows(sql`update wallets set held = held + ${count * HOLD_MICROS} where id = ${wallet!.id}`)
      await rows(sql`insert into key_spend (key_id, month, held, charged) values (${keyId}, ${month}, ${count * HOLD_MICROS}, 0)`)
      return { keyId, accountId, walletId: wallet!.id }
    }

    test('20,000 expired holds are all released in one sweep after a restart', async () => {
      const { keyId, accountId } = await abandonedHolds(20_000)
      // A new process on the same database (a restart): its first sweep.
      const restarted = createServices({ config: testConfig(), database: suite.database })
      const expired = await restarted.sweeper.expire(kind.kind === 'pglite' ? { everyOpenHold: true } : {})
      restarted.close()
      expect(expired).toBe(20_000)
      expect(await suite.harness.admin('GET', `/accounts/${accountId}`).then((reply) => reply.json.wallet)).toEqual({ balance: 100, held: 0, available: 100 })
      const [entries] = await rows<{ n: number }>(sql`select count(*)::int as n from ledger_entries where key_id = ${keyId} and kind = 'expire'`)
      expect(entries!.n).toBe(20_000)
      const [spend] = await rows<{ held: string }>(sql`select held::text as held from key_spend where key_id = ${keyId}`)
      expect(spend!.held).toBe('0')
      await expectBooksBalance(suite.database.db)
    }, 120_000)

    test('a sweep that fails logs one short line; the sweeps go on, expiring once owners had a hold TTL to renew', async () => {
      const { accountId } = await abandonedHolds(50)
      const switchable = flaky(suite.database)
      let clock = Date.now()
      const services = createServices({ config: testConfig(), database: switchable.handle, now: () => clock })
      const logged = spyOn(console, 'error').mockImplementation(() => {})
      try {
        switchable.down = true
        await services.sweeper.tick()
        const lines = logged.mock.calls.map((call) => String(call[0]))
        expect(lines).toHaveLength(1)
        expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', message: 'hold sweep failed', error: { code: 'ECONNREFUSED' } })
        expect(lines[0]!.length).toBeLessThan(400)
        expect((await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.held).toBe(0.05)
        switchable.down = false
        // Live owners were cut off too, most likely: they get a whole TTL (120 s) to renew first.
        await services.sweeper.tick()
        expect((await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.held).toBe(0.05)
        clock += 119_000
        await services.sweeper.tick()
        expect((await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.held).toBe(0.05)
        clock += 2_000
        await services.sweeper.tick()
        expect((await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.held).toBe(0)
      } finally {
        logged.mockRestore()
        services.close()
      }
      await expectBooksBalance(suite.database.db)
    })

    test('the heartbeat renews the holds of live calls, not holds nobody is closing', async () => {
      const { walletId } = await abandonedHolds(3, false)
      const payer = {
        type: 'wallet' as const,
        walletId,
        accountId: null,
        keyId: null,
        ownerId: walletId,
        userSub: null,
        env: null,
        spenderId: null,
        quotas: NO_QUOTAS,
        tokensPerMinute: null,
      }
      const live = await suite.harness.services.holds.take({ payer, amount: 10n, requestId: 'req_live', model: 'test/cheap', provider: 'a' })
      await rows(sql`update holds set expires_at = now() - interval '1 second' where wallet_id = ${walletId}`)
      await suite.harness.services.sweeper.heartbeat()
      const stale = await rows<{ id: string }>(sql`select id from holds where wallet_id = ${walletId} and expires_at < now()`)
      expect(stale.map((row) => row.id).sort()).toHaveLength(3)
      expect(stale.map((row) => row.id)).not.toContain(live.id)
      expect(await suite.harness.services.sweeper.expire()).toBe(3)
      await suite.harness.services.holds.release(live)
      await expectBooksBalance(suite.database.db)
    })
  })
}
