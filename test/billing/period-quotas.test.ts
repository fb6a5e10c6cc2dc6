import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { standingAfterCharge } from '../../src/billing/spend'
import { queryRows } from '../../src/db/rows'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, LEASE_MODES, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'
import { expectBooksBalance } from '../support/ledger-checks'

// test/cheap is priced 1 credit per million input and 2 per million output tokens: the mock's
// usage below (10 in, 20 out) costs 50 micro-credits, well under a hold for 100 output tokens.
const chat = (maxTokens = 100) => ({ model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: maxTokens })
const CALL_COST = 50
/** When each period of 2026-11-30T12:00Z (a Monday) ends: the next UTC midnight, the next Monday, the first of the next month. */
const RESETS = { day: '2026-12-01T00:00:00.000Z', week: '2026-12-07T00:00:00.000Z', month: '2026-12-01T00:00:00.000Z' }
const credits = (micros: number) => micros / 1e6

const PERIOD_WORDS = { day: /daily quota \(per UTC day\)/, week: /weekly quota \(per ISO week/, month: /monthly quota \(per UTC calendar month\)/ } as const

/** The amount of the last hold the key took (exact holds: one ledger entry per call). */
async function lastHold(database: FreshDatabase, keyId: string): Promise<number> {
  const [row] = await queryRows<{ amount: string }>(
    database.db,
    sql`select amount::text as amount from ledger_entries where key_id = ${keyId} and kind = 'hold' order by id desc limit 1`,
  )
  if (!row) throw new Error(`no hold of ${keyId}`)
  return Number(row.amount)
}

/** A spender's spend rows (key_spend) as period key -> {held, charged} in micro-credits. */
async function spendRows(database: FreshDatabase, spenderId: string): Promise<Record<string, { held: number; charged: number }>> {
  const rows = await queryRows<{ month: string; held: string; charged: string }>(
    database.db,
    sql`select month, held::text as held, charged::text as charged from key_spend where key_id = ${spenderId} order by month`,
  )
  return Object.fromEntries(rows.map((row) => [row.month, { held: Number(row.held), charged: Number(row.charged) }]))
}

for (const kind of testDatabases) {
  describe(`spend limits by period on keys (${kind.kind})`, () => {
    let clock = Date.parse('2026-11-30T12:00:00Z')
    const suite = gatewaySuite(kind, { now: () => clock })
    const send = (key: string) => suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat() })
    const patch = (id: string, body: unknown) => suite.harness.admin('PATCH', `/keys/${id}`, body)
    beforeAll(() => {
      suite.upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
    })

    for (const period of ['day', 'week', 'month'] as const) {
      test(`the ${period}'s limit refuses the hold that would pass it, naming the period, and admits the one that reaches it exactly`, async () => {
        const { id, key } = await suite.harness.key()
        expect((await send(key)).status).toBe(200)
        const hold = await lastHold(suite.database, id)
        expect(hold).toBeGreaterThan(CALL_COST)
        // One micro-credit short of what the next hold needs: refused before any upstream call.
        expect((await patch(id, { quotas: { [period]: credits(CALL_COST + hold - 1) } })).status).toBe(200)
        const upstreamCalls = suite.upstream.received.length
        const refused = await send(key)
        expectError(refused, 403, 'api_key_quota_exceeded')
        expect(refused.json.error.message).toMatch(PERIOD_WORDS[period])
        // What the request needed, what is left of the limit, when it resets, and the field that sizes the worst case.
        expect(refused.json.error.message).toContain(
          `${credits(CALL_COST + hold - 1)} credits: its worst case is ${credits(hold)} credits and ${credits(hold - 1)} are left (${credits(CALL_COST)} already spent or held).`,
        )
        expect(refused.json.error.message).toContain(`The limit resets at ${RESETS[period]}.`)
        expect(refused.json.error.message).toContain('The worst case assumes max_tokens = 100 output tokens: a lower max_tokens needs less.')
        expect(suite.upstream.received.length).toBe(upstreamCalls)
        // Exactly enough: admitted.
        expect((await patch(id, { quotas: { [period]: credits(CALL_COST + hold) } })).status).toBe(200)
        expect((await send(key)).status).toBe(200)
        const view = await suite.harness.admin('GET', `/keys/${id}`)
        expect(view.json.quotas[period]).toBe(credits(CALL_COST + hold))
        expect(view.json.spent).toEqual({ day: credits(2 * CALL_COST), week: credits(2 * CALL_COST), month: credits(2 * CALL_COST) })
        await expectBooksBalance(suite.database.db)
      })
    }

    test('monthly_quota is quotas.month, both ways; both given: the same value or a 400 naming monthly_quota', async () => {
      const viaAlias = await suite.harness.admin('POST', '/keys', { account_id: (await suite.harness.account()).id, env: 'prod', monthly_quota: 5 })
      expect(viaAlias.json).toMatchObject({ monthly_quota: 5, quotas: { day: null, week: null, month: 5 } })
      const viaQuotas = await suite.harness.admin('POST', '/keys', {
        account_id: (await suite.harness.account()).id,
        env: 'prod',
        quotas: { month: 7, day: 1 },
      })
      expect(viaQuotas.json).toMatchObject({ monthly_quota: 7, quotas: { day: 1, week: null, month: 7 } })
      const same = await suite.harness.admin('POST', '/keys', {
        account_id: (await suite.harness.account()).id,
        env: 'prod',
        monthly_quota: 3,
        quotas: { month: 3 },
      })
      expect(same.status).toBe(201)
      const differing = await suite.harness.admin('POST', '/keys', {
        account_id: (await suite.harness.account()).id,
        env: 'prod',
        monthly_quota: 3,
        quotas: { month: 4 },
      })
      expectError(differing, 400, 'invalid_request')
      expect(differing.json.error.param).toBe('monthly_quota')
      // On an edit too: the alias clears what quotas.month set, and quotas.month what the alias set.
      expect((await patch(viaQuotas.json.id, { monthly_quota: null })).json).toMatchObject({ monthly_quota: null, quotas: { day: 1, month: null } })
      expect((await patch(viaQuotas.json.id, { quotas: { month: 2.5 } })).json).toMatchObject({ monthly_quota: 2.5, quotas: { day: 1, month: 2.5 } })
      expectError(await patch(viaQuotas.json.id, { monthly_quota: null, quotas: { month: 1 } }), 400, 'invalid_request')
    })

    test('PATCH changes only the periods it names, and null clears one', async () => {
      const { id } = await suite.harness.key({ quotas: { day: 1, week: 2 } })
      expect((await patch(id, { quotas: { week: 3.5 } })).json.quotas).toEqual({ day: 1, week: 3.5, month: null })
      expect((await patch(id, { quotas: { day: null } })).json.quotas).toEqual({ day: null, week: 3.5, month: null })
      expect((await patch(id, { name: 'renamed' })).json.quotas).toEqual({ day: null, week: 3.5, month: null })
      expect((await suite.harness.admin('GET', `/keys/${id}`)).json.quotas).toEqual({ day: null, week: 3.5, month: null })
    })

    test('bad limits are a 400 naming the field: an unknown period, negative, too precise, too large, not a number', async () => {
      const { id } = await suite.harness.key()
      const accountId = (await suite.harness.account()).id
      for (const [quotas, param] of [
        [{ hour: 1 }, 'quotas.hour'],
        [{ day: -1 }, 'quotas.day'],
        [{ week: 0.0000001 }, 'quotas.week'],
        [{ month: 1e10 }, 'quotas.month'],
        [{ day: '5' }, 'quotas.day'],
      ] as const) {
        for (const reply of [await patch(id, { quotas }), await suite.harness.admin('POST', '/keys', { account_id: accountId, env: 'prod', quotas })]) {
          expectError(reply, 400, 'invalid_request')
          expect(reply.json.error.param).toBe(param)
        }
      }
      expectError(await patch(id, { quotas: [1] }), 400, 'invalid_request')
      // Nothing was changed by the refused edits.
      expect((await suite.harness.admin('GET', `/keys/${id}`)).json.quotas).toEqual({ day: null, week: null, month: null })
    })

    test('a new day, ISO week and month start from 0 with the clock alone: yesterday does not count today, the week from Monday, the month from the 1st', async () => {
      const { id, key } = await suite.harness.key()
      clock = Date.parse('2026-12-06T23:59:00Z') // a Sunday
      expect((await send(key)).status).toBe(200)
      const hold = await lastHold(suite.database, id)
      // Each limit leaves room for one call in its period.
      const oneCall = credits(CALL_COST + hold - 1)
      const wallet = async () => (await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })).json.key

      expect((await patch(id, { quotas: { day: oneCall } })).status).toBe(200)
      expectError(await send(key), 403, 'api_key_quota_exceeded')
      clock = Date.parse('2026-12-07T00:00:01Z') // Monday: a new day and a new ISO week
      expect(await wallet()).toMatchObject({ spent: { day: 0, week: 0, month: credits(CALL_COST) } })
      expect((await send(key)).status).toBe(200)
      expectError(await send(key), 403, 'api_key_quota_exceeded')

      expect((await patch(id, { quotas: { day: null, week: oneCall } })).status).toBe(200)
      clock = Date.parse('2026-12-13T23:59:00Z') // the same week's Sunday
      expect(await wallet()).toMatchObject({ spent: { day: 0, week: credits(CALL_COST), month: credits(2 * CALL_COST) } })
      const weekly = await send(key)
      expectError(weekly, 403, 'api_key_quota_exceeded')
      expect(weekly.json.error.message).toMatch(PERIOD_WORDS.week)
      clock = Date.parse('2026-12-14T00:00:00Z') // Monday 00:00 UTC
      expect((await send(key)).status).toBe(200)

      expect((await patch(id, { quotas: { week: null, month: credits(3 * CALL_COST + hold - 1) } })).status).toBe(200)
      clock = Date.parse('2026-12-31T23:59:59Z')
      const monthly = await send(key)
      expectError(monthly, 403, 'api_key_quota_exceeded')
      expect(monthly.json.error.message).toMatch(PERIOD_WORDS.month)
      clock = Date.parse('2027-01-01T00:00:00Z') // a Friday: a new month, the same ISO week (2026-W53)
      expect(await wallet()).toMatchObject({ spent: { day: 0, week: 0, month: 0 }, month_spent: 0 })
      expect((await send(key)).status).toBe(200)
      expect(await wallet()).toMatchObject({ spent: { day: credits(CALL_COST), week: credits(CALL_COST), month: credits(CALL_COST) } })

      // Each period's own row, keyed by the period: nothing was reset, new rows were started (the
      // refusals found, and left empty, the rows of their periods).
      const rows = await spendRows(suite.database, id)
      expect(Object.fromEntries(Object.entries(rows).flatMap(([period, row]) => (row.charged > 0 ? [[period, row.charged]] : [])))).toEqual({
        '2026-12': 3 * CALL_COST,
        '2026-12-06': CALL_COST,
        '2026-12-07': CALL_COST,
        '2026-12-14': CALL_COST,
        '2026-W49': CALL_COST,
        '2026-W50': CALL_COST,
        '2026-W51': CALL_COST,
        '2027-01': CALL_COST,
        '2027-01-01': CALL_COST,
        '2026-W53': CALL_COST,
      })
      // The sweep deletes the rows of past periods, keeping the current ones and the ones just before.
      expect(await suite.harness.services.sweeper.deletePastSpend()).toBeGreaterThanOrEqual(6)
      expect(Object.keys(await spendRows(suite.database, id)).sort()).toEqual(['2026-12', '2026-12-31', '2026-W53', '2027-01', '2027-01-01'])
      await expectBooksBalance(suite.database.db)
      clock = Date.parse('2026-11-30T12:00:00Z')
    })

    test("standingAfterCharge: a settled hold's payer, its spend and its limits in each period its charge counted in (for the quota alerts)", async () => {
      const { id, key } = await suite.harness.key({ quotas: { day: 0.01, month: 1 } })
      const caller = await suite.harness.services.authenticator.authenticate(
        { method: 'POST', path: '/v1/chat/completions', credentials: 'bearer', scope: 'chat' },
        new Headers({ authorization: `Bearer ${key}` }),
      )
      const services = suite.harness.services
      const hold = await services.holds.take({
        payer: await services.payers.payerFor(caller),
        amount: 5000n,
        requestId: 'req_standing',
        model: 'test/cheap',
        provider: 'a',
      })
      await services.holds.settle(hold, 1234n, { input_tokens: 1 })
      await services.holds.caughtUp(5000)
      const standing = await standingAfterCharge(suite.database.db, hold)
      expect(standing).toEqual([
        { period: 'day', periodStart: new Date('2026-11-30T00:00:00Z'), quota: 10_000n, spent: 1234n, held: 0n },
        { period: 'week', periodStart: new Date('2026-11-30T00:00:00Z'), quota: null, spent: 1234n, held: 0n },
        { period: 'month', periodStart: new Date('2026-11-01T00:00:00Z'), quota: 1_000_000n, spent: 1234n, held: 0n },
      ])
      expect((await suite.harness.admin('GET', `/keys/${id}`)).json.spent).toEqual({ day: 0.001234, week: 0.001234, month: 0.001234 })
    })

    test('GET /v1/wallet and the admin key record show quotas and spent; monthly_quota and month_spent stay', async () => {
      const { id, key } = await suite.harness.key({ quotas: { day: 2, week: 10 }, monthly_quota: 30 })
      expect((await send(key)).status).toBe(200)
      const wallet = await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })
      expect(wallet.json.key).toEqual({
        id,
        env: 'prod',
        allotment: null,
        monthly_quota: 30,
        month_spent: credits(CALL_COST),
        quotas: { day: 2, week: 10, month: 30 },
        spent: { day: credits(CALL_COST), week: credits(CALL_COST), month: credits(CALL_COST) },
      })
      const record = await suite.harness.admin('GET', `/keys/${id}`)
      expect(record.json).toMatchObject({
        monthly_quota: 30,
        quotas: { day: 2, week: 10, month: 30 },
        spent: { day: credits(CALL_COST), week: credits(CALL_COST), month: credits(CALL_COST) },
      })
      expect(record.text).toContain('"quotas":{"day":2.000000,"week":10.000000,"month":30.000000}')
    })
  })

  describe(`spend limits by period on users (${kind.kind})`, () => {
    let idp: IdentityProvider
    beforeAll(async () => {
      idp = await new IdentityProvider().start()
    })
    afterAll(() => idp.stop())
    const suite = gatewaySuite(kind, {
      env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience, TOLLGATE_OIDC_JWKS_URL: `${idp.issuer}/jwks` }),
    })
    const send = async (sub: string) => suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(await idp.token({ sub })), body: chat() })
    const fund = (sub: string) => suite.harness.admin('POST', '/users/credits', { iss: idp.issuer, sub, amount: 10 })
    const allotment = (sub: string) => suite.harness.admin('GET', `/users/allotment?iss=${encodeURIComponent(idp.issuer)}&sub=${sub}`)
    beforeAll(() => {
      suite.upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
    })

    /** The amount of the user's last hold. */
    const lastUserHold = async (sub: string) => {
      const [row] = await queryRows<{ amount: string }>(
        suite.database.db,
        sql`select amount::text as amount from ledger_entries where user_sub = ${sub} and kind = 'hold' order by id desc limit 1`,
      )
      return Number(row?.amount)
    }

    test("a user's own limit refuses with 403 user_quota_exceeded naming the period; the allotment shows quotas and spent", async () => {
      expect((await fund('alice')).status).toBe(200)
      expect((await send('alice')).status).toBe(200)
      const hold = await lastUserHold('alice')
      const own = await suite.harness.admin('PUT', '/users/quotas', { iss: idp.issuer, sub: 'alice', quotas: { day: credits(CALL_COST + hold - 1) } })
      expect(own.status).toBe(200)
      expect(own.json).toMatchObject({ quotas: { day: credits(CALL_COST + hold - 1), week: null, month: null }, quotas_from: 'user' })
      const refused = await send('alice')
      expectError(refused, 403, 'user_quota_exceeded')
      expect(refused.json.error.type).toBe('permission_error')
      expect(refused.json.error.message).toMatch(/the user's daily quota \(per UTC day\)/)
      expect((await allotment('alice')).json).toEqual({
        balance: 10 - credits(CALL_COST),
        held: 0,
        available: 10 - credits(CALL_COST),
        quotas: { day: credits(CALL_COST + hold - 1), week: null, month: null },
        quotas_from: 'user',
        spent: { day: credits(CALL_COST), week: credits(CALL_COST), month: credits(CALL_COST) },
      })
      // {} clears the user's own: nothing limits them now.
      expect((await suite.harness.admin('PUT', '/users/quotas', { iss: idp.issuer, sub: 'alice', quotas: {} })).json.quotas_from).toBeNull()
      expect((await send('alice')).status).toBe(200)
      await expectBooksBalance(suite.database.db)
    })

    test('the default applies to every user without limits of their own, not to one with them; {} clears it; the messages envelope carries the code', async () => {
      for (const sub of ['bob', 'carol']) expect((await fund(sub)).status).toBe(200)
      expect((await suite.harness.admin('PUT', '/users/quotas', { iss: idp.issuer, sub: 'carol', quotas: { week: 5 } })).status).toBe(200)
      const set = await suite.harness.admin('PUT', '/users/default-quotas', { quotas: { month: 0.000001 } })
      expect(set.json).toEqual({ quotas: { day: null, week: null, month: 0.000001 } })
      expect((await suite.harness.admin('GET', '/users/default-quotas')).json).toEqual(set.json)
      const refused = await send('bob')
      expectError(refused, 403, 'user_quota_exceeded')
      expect(refused.json.error.message).toMatch(PERIOD_WORDS.month)
      const messages = await suite.harness.call('POST', '/v1/messages', {
        headers: bearer(await idp.token({ sub: 'bob' })),
        body: { model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
      })
      expectError(messages, 403, 'user_quota_exceeded', 'messages')
      expect((await allotment('bob')).json).toMatchObject({ quotas: { month: 0.000001 }, quotas_from: 'default' })
      expect((await send('carol')).status).toBe(200)
      expect((await suite.harness.admin('PUT', '/users/default-quotas', { quotas: {} })).json).toEqual({ quotas: { day: null, week: null, month: null } })
      expect((await send('bob')).status).toBe(200)
      expectError(await suite.harness.admin('PUT', '/users/default-quotas', { quotas: { year: 1 } }), 400, 'invalid_request')
      await expectBooksBalance(suite.database.db)
    })
  })

  for (const mode of LEASE_MODES) {
    describe(`users' spend limits under concurrency, ${mode.name} (${kind.kind})`, () => {
      let idp: IdentityProvider
      beforeAll(async () => {
        idp = await new IdentityProvider().start()
      })
      afterAll(() => idp.stop())
      const suite = gatewaySuite(kind, {
        env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience, TOLLGATE_OIDC_JWKS_URL: `${idp.issuer}/jwks`, ...mode.env }),
        gateway: false,
      })
      test('two instances, 60 calls of one user at once at a weekly limit of about 6 holds: exactly 6 served, never passed', async () => {
        const [first, second] = [suite.instance(), suite.instance()] as [TestGateway, TestGateway]
        suite.upstream.always({ delayMs: 20, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
        const call = async (gateway: TestGateway, sub: string) =>
          gateway.call('POST', '/v1/chat/completions', { headers: bearer(await idp.token({ sub })), body: chat(1000) })
        for (const sub of ['probe', 'dave']) await first.admin('POST', '/users/credits', { iss: idp.issuer, sub, amount: 100 })
        // Each answer costs more than its hold: a charge is a whole hold.
        expect((await call(first, 'probe')).status).toBe(200)
        await first.services.holds.landPending(5000)
        const [charge] = await queryRows<{ amount: string }>(
          suite.database.db,
          sql`select amount::text as amount from ledger_entries where user_sub = 'probe' and kind = 'charge'`,
        )
        const holdAmount = Number(charge?.amount)
        expect(holdAmount).toBeGreaterThan(0)
        const limit = Math.floor(6.5 * holdAmount)
        expect((await first.admin('PUT', '/users/quotas', { iss: idp.issuer, sub: 'dave', quotas: { week: credits(limit) } })).status).toBe(200)
        const replies = await Promise.all(Array.from({ length: 60 }, (_, index) => call(index % 2 === 0 ? first : second, 'dave')))
        const statuses = replies.map((reply) => reply.status)
        expect(statuses.filter((status) => status !== 200 && status !== 403)).toEqual([])
        for (const reply of replies) if (reply.status === 403) expect(reply.json.error.code).toBe('user_quota_exceeded')
        for (const started of [first, second]) expect(await started.services.holds.landPending(5000)).toBe(true)
        expect(statuses.filter((status) => status === 200)).toHaveLength(6)
        await expectBooksBalance(suite.database.db)
        const allotment = await first.admin('GET', `/users/allotment?iss=${encodeURIComponent(idp.issuer)}&sub=dave`)
        expect(allotment.json.spent).toEqual({ day: credits(6 * holdAmount), week: credits(6 * holdAmount), month: credits(6 * holdAmount) })
        const [user] = await queryRows<{ id: string }>(suite.database.db, sql`select id from users where subject = 'dave'`)
        for (const row of Object.values(await spendRows(suite.database, user?.id ?? ''))) expect(row).toEqual({ held: 0, charged: 6 * holdAmount })
      }, 60_000)
    })
  }

  describe(`spend limits under concurrency (${kind.kind})`, () => {
    for (const mode of LEASE_MODES) {
      describe(mode.name, () => {
        const suite = gatewaySuite(kind, { env: mode.env, gateway: false })
        test('two instances, 100 calls at once at a daily limit of about 10 holds: exactly as many served as the limit affords, never passed', async () => {
          const [first, second] = [suite.instance(), suite.instance()] as [TestGateway, TestGateway]
          // Each answer costs more than its hold, so each success takes one whole hold of the limit.
          suite.upstream.always({ delayMs: 20, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
          const probe = await first.key({ account_id: (await first.account(100)).id })
          expect((await first.call('POST', '/v1/chat/completions', { headers: bearer(probe.key), body: chat(1000) })).status).toBe(200)
          await first.services.holds.landPending(5000)
          const [charge] = await queryRows<{ amount: string }>(
            suite.database.db,
            sql`select amount::text as amount from ledger_entries where key_id = ${probe.id} and kind = 'charge'`,
          )
          const holdAmount = Number(charge?.amount)
          expect(holdAmount).toBeGreaterThan(0)
          const limit = 10 * holdAmount + holdAmount / 2
          const { key, id } = await first.key({ quotas: { day: credits(Math.floor(limit)), week: 1, month: 1 }, account_id: (await first.account(100)).id })
          const replies = await Promise.all(
            Array.from({ length: 100 }, (_, index) =>
              (index % 2 === 0 ? first : second).call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(1000) }),
            ),
          )
          const statuses = replies.map((reply) => reply.status)
          expect(statuses.filter((status) => status !== 200 && status !== 403)).toEqual([])
          for (const reply of replies) if (reply.status === 403) expect(reply.json.error.code).toBe('api_key_quota_exceeded')
          for (const started of [first, second]) expect(await started.services.holds.landPending(5000)).toBe(true)
          expect(statuses.filter((status) => status === 200)).toHaveLength(10)
          await expectBooksBalance(suite.database.db)
          const rows = Object.entries(await spendRows(suite.database, id))
          expect(rows).toHaveLength(3)
          for (const [, row] of rows) expect(row).toEqual({ held: 0, charged: 10 * holdAmount })
          expect(10 * holdAmount).toBeLessThanOrEqual(limit)
        }, 60_000)
      })
    }
  })
}
