import { type Static, Type } from '@sinclair/typebox'
import { PricingSchema } from '../billing/price-schema'
import { type ProviderConfig, ProviderSchema } from '../providers/provider-config'

/**
 * The catalogue part of the config file (docs/configuration.md#config-file): providers, models and aliases.
 * The built-in catalogue (builtin.ts) has the same shape.
 */

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

export type ModelType = Static<typeof ModelTypeSchema>
export type ModelEntry = Static<typeof ModelSchema>
export type AliasEntry = Static<typeof AliasSchema>
export type CatalogFile = Static<typeof CatalogFileSchema>

/** The catalogue as a config holds it: the file's models and aliases, its providers resolved (credentials read, defaults filled in). */
export interface CatalogEntries {
  providers: Map<string, ProviderConfig>
  models: ModelEntry[]
  aliases: AliasEntry[]
}
