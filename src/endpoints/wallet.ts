import { Elysia, t } from 'elysia'
import { balanceView, microsToCredits } from '../billing/money'
import { keyMonth } from '../billing/spend'
import { findWallet } from '../billing/wallets'
import type { GatewayContext } from '../http/gateway-context'
import { errorResponses, KEYED_READ_ERRORS } from '../http/openapi/responses'
import { BalanceSchema } from '../http/schemas'
import type { Services } from '../services/services'

/** How long GET /v1/wallet waits for this instance's charges in flight; past it (a database outage) it answers with what is written. */
const WALLET_CATCH_UP_MS = 500

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
      const [wallet, allotment, month] = await Promise.all([
        findWallet(services.db, 'wallet', key.accountId),
        findWallet(services.db, 'key_allotment', key.id),
        keyMonth(services.db, key.id, services.now()),
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
          month_spent: microsToCredits(month.charged),
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
        }),
      }),
      detail: {
        tags: ['Account'],
        summary: "The calling key's wallet, allotment and monthly quota use",
        description: 'API keys only: a user token is refused.',
        responses: errorResponses('openai', KEYED_READ_ERRORS),
      },
    },
  )
}
