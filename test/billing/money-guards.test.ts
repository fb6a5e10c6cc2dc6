import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { MAX_HOLD_MICROS } from '../../src/billing/money'
import { NO_QUOTAS } from '../../src/billing/periods'
import { chargeForUsage, chargePerMillion, chargePerSecond, worstCaseForTokens } from '../../src/billing/pricing'
import { UntrustedUsageError } from '../../src/billing/usage-guard'
import { queryRows } from '../../src/db/rows'
import { InvalidRequestError } from '../../src/errors/kinds'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import { rejectionOf } from '../support/rejection'

const pricing = { input: 3, output: 15 }
const usage = { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 }

describe('pricing refuses counts it cannot trust', () => {
  test('negative, fractional, non-numeric and unsafe counts are UntrustedUsageError, never a charge', () => {
    for (const bad of [-1, 10.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '12' as unknown as number]) {
      expect(() => chargeForUsage(pricing, { ...usage, outputTokens: bad })).toThrow(UntrustedUsageError)
      expect(() => chargePerMillion(1, bad)).toThrow(UntrustedUsageError)
    }
    expect(() => chargePerSecond(0.4, -3)).toThrow(UntrustedUsageError)
    expect(() => chargePerSecond(0.4, 1e20)).toThrow(UntrustedUsageError)
    expect(chargeForUsage(pricing, usage)).toBe(180n)
  })

  test("a request's own limits out of range are the client's fault: 400, not a 500", () => {
    expect(() => worstCaseForTokens(pricing, 10, 1e300)).toThrow(InvalidRequestError)
    expect(() => worstCaseForTokens(pricing, 10, 0.5)).toThrow(InvalidRequestError)
  })
})

for (const kind of testDatabases) {
  describe(`the database refuses what the code must never write (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)

    const walletOf = async () => {
      const { accountId } = await suite.harness.key()
      const [wallet] = await queryRows<{ id: string }>(suite.database.db, sql`select id from wallets where owner_id = ${accountId}`)
      return wallet!.id
    }

    test('a hold above the ceiling: refused by the hold book with a 400, and by the database', async () => {
      const walletId = await walletOf()
      const payer = {
        type: 'wallet' as const,
        walletId,
        ownerId: 'x',
        accountId: null,
        keyId: null,
        userSub: null,
        env: null,
        spenderId: null,
        quotas: NO_QUOTAS,
        tokensPerMinute: null,
      }
      expect(
        await rejectionOf(suite.harness.services.holds.take({ payer, amount: MAX_HOLD_MICROS + 1n, requestId: 'req_big', model: 'm', provider: 'r' })),
      ).toBeInstanceOf(InvalidRequestError)
      expect(
        await rejectionOf(
          queryRows(
            suite.database.db,
            sql`insert into holds (id, request_id, wallet_id, payer_type, amount, model, route, instance_id, month, expires_at)
              values ('hold_big', 'req_big', ${walletId}, 'wallet', ${(MAX_HOLD_MICROS + 1n).toString()}::bigint, 'm', 'r', 'inst', '2026-11', now())`,
          ),
        ),
      ).toBeInstanceOf(Error)
    })

    test('a negative charge or uncollected amount: refused by the ledger', async () => {
      const walletId = await walletOf()
      const entry = (kind: string, amount: number, uncollected = 0) =>
        queryRows(
          suite.database.db,
          sql`insert into ledger_entries (kind, amount, wallet_id, payer_type, uncollected) values (${kind}, ${amount}, ${walletId}, 'wallet', ${uncollected})`,
        )
      for (const kindOfEntry of ['charge', 'hold', 'release', 'expire', 'topup']) expect(await rejectionOf(entry(kindOfEntry, -1))).toBeInstanceOf(Error)
      expect(await rejectionOf(entry('charge', 1, -1))).toBeInstanceOf(Error)
      // An adjustment is the one entry whose sign is its meaning.
      await entry('adjustment', -1)
    })
  })
}
