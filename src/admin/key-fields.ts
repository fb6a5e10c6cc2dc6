import { Type } from '@sinclair/typebox'
import { KEY_SCOPES } from '../auth/endpoint-rules'
import { ALLOWED_MODEL_PATTERN } from '../auth/model-access'
import { QuotasField } from './quota-fields'

/** A key's settings as creating and editing a key both validate them. */
export const KeyFields = {
  name: Type.String({ maxLength: 200 }),
  scopes: Type.Array(Type.Union(KEY_SCOPES.map((scope) => Type.Literal(scope))), { uniqueItems: true }),
  allowed_models: Type.Array(Type.String({ pattern: ALLOWED_MODEL_PATTERN }), { uniqueItems: true }),
  monthly_quota: Type.Number({ minimum: 0, description: 'Credits per UTC calendar month: the same as quotas.month' }),
  quotas: QuotasField,
  low_balance_threshold: Type.Number({
    minimum: 0,
    maximum: 1_000_000_000,
    description: 'Credits: when the balance falls below this, a balance.low alert is sent (docs/operations.md#alerts); null clears it.',
  }),
  expires_at: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}', description: 'ISO-8601 date and time' }),
  rpm: Type.Integer({ minimum: 1 }),
  tpm: Type.Integer({ minimum: 1 }),
}
