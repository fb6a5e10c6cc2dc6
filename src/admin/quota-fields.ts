import { Type } from '@sinclair/typebox'
import { PERIODS, type PeriodQuotas } from '../billing/periods'
import { InvalidRequestError } from '../errors/kinds'
import { amountToMicros } from './views'

/** One period's limit in credits: bounded like every amount (amountToMicros). */
const Limit = Type.Number({ minimum: 0, description: 'Credits, up to 6 decimals' })
const NullableLimit = Type.Union([Limit, Type.Null()])

/**
 * Spend limits by period in credits (docs/billing.md#spend-limits-by-period): `day` (UTC), `week`
 * (ISO, from Monday 00:00 UTC) and `month` (calendar, UTC); null or absent: no limit in that
 * period. Any other name is refused.
 */
export const QuotasField = Type.Object(
  { day: Type.Optional(NullableLimit), week: Type.Optional(NullableLimit), month: Type.Optional(NullableLimit) },
  { additionalProperties: false },
)

/** The fields a request gives for limits: `quotas`, and `monthly_quota`, the same as `quotas.month`. */
export interface QuotaInput {
  quotas?: { day?: number | null; week?: number | null; month?: number | null }
  monthly_quota?: number | null
}

/**
 * The limits a request changes, in micro-credits, by period: only the periods it names (null
 * clears one). `monthly_quota` and `quotas.month` are one field: both given and different is a 400.
 */
export function quotaChanges(input: QuotaInput): Partial<PeriodQuotas> {
  const changes: Partial<PeriodQuotas> = {}
  for (const period of PERIODS) {
    const given = input.quotas?.[period]
    if (given !== undefined) changes[period] = given === null ? null : amountToMicros(given, `quotas.${period}`)
  }
  if (input.monthly_quota !== undefined) {
    const alias = input.monthly_quota === null ? null : amountToMicros(input.monthly_quota, 'monthly_quota')
    if (changes.month !== undefined && changes.month !== alias) {
      throw new InvalidRequestError('monthly_quota is quotas.month: give one of them, or the same value in both.', { param: 'monthly_quota' })
    }
    changes.month = alias
  }
  return changes
}

/** A request's limits for a whole set (a user's own, the default): periods it leaves out have none. */
export function wholeQuotas(quotas: QuotaInput['quotas']): PeriodQuotas {
  const changes = quotaChanges({ quotas })
  return { day: changes.day ?? null, week: changes.week ?? null, month: changes.month ?? null }
}
