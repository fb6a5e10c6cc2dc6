import { type Static, Type } from '@sinclair/typebox'

/**
 * A model's prices, in credits per unit (pricing.ts turns them into charges). Billing owns the
 * shape; the catalogue (catalog-schema.ts) embeds it in each model entry.
 */

const Price = Type.Number({ minimum: 0 })

export const PricingSchema = Type.Object(
  {
    input: Type.Optional(Price),
    output: Type.Optional(Price),
    cacheRead: Type.Optional(Price),
    cacheWrite: Type.Optional(Price),
    /** One-hour prompt-cache writes; without it a request's longer cache lifetimes are not forwarded. */
    cacheWrite1h: Type.Optional(Price),
    webSearch: Type.Optional(Price),
    image: Type.Optional(Price),
    videoSecond: Type.Optional(Price),
    inputChars: Type.Optional(Price),
    audioMinute: Type.Optional(Price),
  },
  { additionalProperties: false },
)

export type Pricing = Static<typeof PricingSchema>
