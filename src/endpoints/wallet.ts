import { Elysia, t } from 'elysia'
import { keyQuotas } from '../auth/payer-directory'
import { balanceView, microsToCredits } from '../billing/money'
import type { PeriodQuotas } from '../billing/periods'
import { spendNow } from '../billing/spend'
import { findWallet } from '../billing/wallets'
import type { GatewayContext } from '../http/gateway-context'
import { errorResponses, KEYED_READ_ERRORS } from '../http/openapi/responses'
import { BalanceSchema } from '../http/schemas'
import type { Services } from '../services/services'

/** How long GET /v1/wallet waits for this instance's charges in flight; past it (a database outage) it answers with what is written. */
const WALLET_CATCH_UP_MS = 500

const CreditsOrNull = t.Union([t.Number(), t.Null()])

function creditsOrNull(quotas: PeriodQuotas) {
  const of = (limit: bigint | null) => (limit === null ? null : microsToCredits(limit))
  return { day: of(quotas.day), week: of(quotas.week), month: of(quotas.month) }
}

export function walletEndpoint(context: GatewayContext, services: Pick<Services, 'db' | 'holds' | 'now'>) {
  return new Elysia({ name: 'endpoints/wallet' }).use(context).get(
    '/v1/wallet',
    async ({ caller }) => {
      // The endpoint rules admit only API keys here.
      if (caller.kind !== 'api-key') throw new Error('wallet endpoint reached without an API key')
      const key = caller.key
      // The charges of calls this instance answered already (drawn from credit leases, they land
      // a few milliseconds after their answers) are in what the client reads.
      await services.holds.caughtUp(WALLET_CATCH_UP_MS)
      const [wallet, allotment, spent] = await Promise.all([
        findWallet(services.db, 'wallet', key.accountId),
        findWallet(services.db, 'key_allotment', key.id),
        spendNow(services.db, key.id, services.now()),
      ])
      if (!wallet) throw new Error(`account ${key.accountId} has no wallet`)
      return {
        object: 'wallet' as const,
        ...balanceView(wallet),
        payer: allotment ? ('allotment' as const) : ('wallet' as const),
        key: {
          id: key.id,
          env: key.env,
          allotment: allotment ? balanceView(allotment) : null,
          monthly_quota: key.monthlyQuota === null ? null : microsToCredits(key.monthlyQuota),
          month_spent: microsToCredits(spent.month.charged),
          quotas: creditsOrNull(keyQuotas(key)),
          spent: { day: microsToCredits(spent.day.charged), week: microsToCredits(spent.week.charged), month: microsToCredits(spent.month.charged) },
        },
      }
    },
    {
      response: t.Object({
        object: t.Literal('wallet'),
        balance: t.Number(),
        held: t.Number(),
        available: t.Number(),
        payer: t.Union([t.Literal('wallet'), t.Literal('allotment')]),
        key: t.Object({
          id: t.String(),
          env: t.String(),
          allotment: t.Union([BalanceSchema, t.Null()]),
          monthly_quota: t.Union([t.Number(), t.Null()]),
          month_spent: t.Number(),
          quotas: t.Object({ day: CreditsOrNull, week: CreditsOrNull, month: CreditsOrNull }),
          spent: t.Object({ day: t.Number(), week: t.Number(), month: t.Number() }),
        }),
      }),
      detail: {
        tags: ['Account'],
        summary: "The calling key's wallet, allotment, spend limits by period and spend in the current periods",
        description: 'API keys only: a user token is refused.',
        responses: errorResponses('openai', KEYED_READ_ERRORS),
      },
    },
  )
}
