import { t } from 'elysia'
import { JsonInteger } from '../schemas'

/** What GET /admin/v1/models answers (src/admin/model-operations.ts), for the API document only. */
const RouteAnswer = t.Object({
  provider: t.String({ description: 'The provider this route calls, as the config names it' }),
  upstream_model: t.String({ description: "The model's name at that provider" }),
  configured: t.Boolean({ description: 'Whether the provider is configured with a credential; a route to one that is not is never tried' }),
  cooldown_seconds: t.Union([t.Number(), t.Null()], { description: "The provider's cooldownSeconds (0: no cooldown); null when not configured" }),
  failures: JsonInteger({ description: 'Failures in a row this process has seen (3 start a cooldown)' }),
  cooling_until: t.Union([t.String({ format: 'date-time' }), t.Null()], {
    description: 'While the route cools down in this process, when that ends; null when it does not',
  }),
})

const ModelAnswer = t.Object({
  id: t.String(),
  type: t.String({ description: 'chat, embedding, image, video, speech or transcription' }),
  aliases: t.Array(t.String(), { description: 'The aliases that have this model among their targets' }),
  context_window: t.Union([JsonInteger({}), t.Null()], { description: 'Tokens; null when the catalogue gives none' }),
  max_output_tokens: t.Union([JsonInteger({}), t.Null()], { description: 'Tokens; null when the catalogue gives none' }),
  pricing: t.Record(t.String(), t.Number(), { description: 'Prices in credits as configured (per million tokens, per call, per image, ...)' }),
  routes: t.Array(RouteAnswer, { description: 'In the order they are tried' }),
})

export const MODEL_ANSWERS = {
  'GET /models': {
    description: 'Every model the gateway serves, with its aliases, limits, prices and routes, then every alias',
    schema: t.Object({
      object: t.Literal('list'),
      data: t.Array(ModelAnswer),
      aliases: t.Array(t.Object({ id: t.String(), strategy: t.Literal('fallback'), targets: t.Array(t.String()) })),
    }),
  },
}
