import { Elysia, t } from 'elysia'
import { creditsJson } from '../billing/money'
import { countJson, recentCharges, summarizeUsage } from '../billing/usage-summary'
import type { GatewayContext } from '../http/gateway-context'
import { answerResponse, errorResponses, KEYED_READ_ERRORS } from '../http/openapi/responses'
import type { Services } from '../services/services'

/** How many of the key's latest billed requests `recent` lists. */
const RECENT_REQUESTS = 100
/** More summary rows than a month of days times any served catalogue of models. */
const MONTH_ROWS = 100_000

const Count = t.Integer({ minimum: 0 })
const Credits = t.Number({ description: 'Credits, exact to six decimals' })
const UsageAnswer = t.Object({
  object: t.Literal('usage'),
  data: t.Array(
    t.Object({
      period: t.String({ description: 'The day (UTC), `YYYY-MM-DD`' }),
      model: t.String(),
      requests: Count,
      input_tokens: Count,
      output_tokens: Count,
      cost: Credits,
    }),
    { description: 'This month by day and model, newest day first; days without billed requests are left out' },
  ),
  recent: t.Array(
    t.Object({
      request_id: t.Union([t.String(), t.Null()]),
      created_at: t.String({ format: 'date-time' }),
      model: t.Union([t.String(), t.Null()]),
      input_tokens: Count,
      output_tokens: Count,
      cost: Credits,
    }),
    { description: `The key's latest billed requests (at most ${RECENT_REQUESTS}), newest first` },
  ),
})

/**
 * `GET /v1/usage` (docs/api.md#usage-for-key-holders): the calling key's own spend this month
 * by day and model, read from the usage rollup, and its latest charges from the ledger, so a
 * customer can reconcile each charge.
 */
export function usageEndpoint(context: GatewayContext, services: Pick<Services, 'db' | 'now'>) {
  return new Elysia({ name: 'endpoints/usage' }).use(context).get(
    '/v1/usage',
    async ({ caller }) => {
      // The endpoint rules admit only API keys here.
      if (caller.kind !== 'api-key') throw new Error('usage endpoint reached without an API key')
      const keyId = caller.key.id
      const now = new Date(services.now())
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
      const [days, recent] = await Promise.all([
        summarizeUsage(services.db, { unit: 'day', dimensions: ['model'], keyId, since: monthStart }, { limit: MONTH_ROWS }),
        recentCharges(services.db, keyId, RECENT_REQUESTS),
      ])
      // Amounts go out as their exact digits (creditsJson), which is why the answer is documented rather than validated.
      return {
        object: 'usage',
        data: days.map((row) => ({
          period: row.period,
          model: row.model ?? '',
          requests: countJson(row.requests),
          input_tokens: countJson(row.input_tokens),
          output_tokens: countJson(row.output_tokens),
          cost: creditsJson(BigInt(row.cost)),
        })),
        recent: recent.map((charge) => ({
          request_id: charge.request_id,
          created_at: charge.created_at.toISOString(),
          model: charge.model,
          input_tokens: countJson(charge.input_tokens),
          output_tokens: countJson(charge.output_tokens),
          cost: creditsJson(charge.amount),
        })),
      }
    },
    {
      detail: {
        tags: ['Account'],
        summary: "The calling key's usage this month by day and model, and its latest billed requests",
        description: 'API keys only, in `Authorization: Bearer`: a user token or `x-api-key` is refused with invalid_api_key.',
        responses: {
          ...answerResponse("The key's usage", { 'application/json': UsageAnswer }),
          ...errorResponses('openai', KEYED_READ_ERRORS),
        },
      },
    },
  )
}
