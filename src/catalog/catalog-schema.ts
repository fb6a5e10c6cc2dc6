import { type Static, Type } from '@sinclair/typebox'
import { PricingSchema } from '../billing/price-schema'

/**
 * The catalogue part of the config file (docs/configuration.md#config-file): providers, models and aliases.
 * The built-in catalogue (builtin.ts) has the same shape.
 */

export const ProviderSchema = Type.Object(
  {
    api: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('gemini'), Type.Literal('vertex')]),
    baseUrl: Type.String({ pattern: '^https?://[^\\s]+$' }),
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    apiKeyEnv: Type.Optional(Type.String({ minLength: 1 })),
    project: Type.Optional(Type.String({ minLength: 1 })),
    location: Type.Optional(Type.String({ minLength: 1 })),
    accessTokenEnv: Type.Optional(Type.String({ minLength: 1 })),
    /** Vertex: a Google service-account key (JSON) the gateway signs its own access tokens with. */
    serviceAccountKeyFile: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * Vertex: the gs:// prefixes client images may name (`gs://my-bucket/uploads/`). Veo reads
     * such an object with the operator's credentials, so any other bucket is refused.
     */
    gcsUriPrefixes: Type.Optional(Type.Array(Type.String({ pattern: '^gs://[^/]+/' }))),
    /** How often a long-running job (a video) is polled. */
    pollIntervalMs: Type.Optional(Type.Integer({ minimum: 10 })),
    /** How long a whole long-running job may take before it is given up (504, not billed). */
    jobTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * Whether an `openai` provider serves OpenAI's Responses API (`/responses`). Unset: it is
     * tried natively, and a 404 or 405 there switches the provider to translation through chat
     * completions for the rest of the process. `true`: always native (a 404 is the client's
     * error). `false`: always translated, `/responses` never called.
     */
    responsesApi: Type.Optional(Type.Boolean()),
    /** How long to wait for an upstream's response headers before trying the next route. */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** How long a stream may stay silent, once its headers came, before the gateway ends it. */
    streamIdleTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
)

export const ModelTypeSchema = Type.Union([
  Type.Literal('chat'),
  Type.Literal('embedding'),
  Type.Literal('image'),
  Type.Literal('video'),
  Type.Literal('speech'),
  Type.Literal('transcription'),
])

export const ModelSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*/[^\\s]+$' }),
    type: ModelTypeSchema,
    routes: Type.Array(Type.Object({ provider: Type.String({ minLength: 1 }), model: Type.String({ minLength: 1 }) }, { additionalProperties: false }), {
      minItems: 1,
    }),
    pricing: PricingSchema,
    contextWindow: Type.Optional(Type.Integer({ minimum: 1 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    videoFamily: Type.Optional(Type.Union([Type.Literal('A'), Type.Literal('B')])),
    /** Family A: the clip lengths (seconds) the model accepts; absent, Veo 3.x's 4, 6 and 8. */
    videoDurations: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 3600 }), { minItems: 1, uniqueItems: true })),
  },
  { additionalProperties: false },
)

export const AliasSchema = Type.Object(
  {
    id: Type.String({ pattern: '^tollgate/[^\\s/]+$' }),
    strategy: Type.Literal('fallback'),
    targets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  },
  { additionalProperties: false },
)

export const CatalogFileSchema = Type.Object(
  {
    providers: Type.Record(Type.String({ pattern: '^[a-zA-Z0-9_-]+$' }), ProviderSchema),
    models: Type.Array(ModelSchema),
    aliases: Type.Optional(Type.Array(AliasSchema)),
  },
  { additionalProperties: false },
)

export type ProviderEntry = Static<typeof ProviderSchema>
export type ModelType = Static<typeof ModelTypeSchema>
export type ModelEntry = Static<typeof ModelSchema>
export type AliasEntry = Static<typeof AliasSchema>
export type CatalogFile = Static<typeof CatalogFileSchema>
