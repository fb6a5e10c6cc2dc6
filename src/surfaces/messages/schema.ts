import { type Static, t } from 'elysia'
import { JsonInteger } from '../../http/schemas'

const MessageSchema = t.Object(
  {
    role: t.String({ minLength: 1 }),
    content: t.Union([t.String(), t.Array(t.Record(t.String(), t.Unknown()))]),
  },
  { additionalProperties: true },
)

const common = {
  model: t.String({ minLength: 1, description: 'anthropic/<model>, or the bare model name' }),
  messages: t.Array(MessageSchema, { minItems: 1 }),
  system: t.Optional(t.Union([t.String(), t.Array(t.Record(t.String(), t.Unknown()))])),
  tools: t.Optional(t.Array(t.Record(t.String(), t.Unknown()))),
}

/** The fields the gateway checks; everything else (thinking, tool_choice, metadata, ...) passes through. */
export const MessagesSchema = t.Object(
  {
    ...common,
    max_tokens: JsonInteger({ minimum: 1 }),
    stream: t.Optional(t.Boolean()),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: true },
)

export const CountTokensSchema = t.Object(common, { additionalProperties: true })

/** A checked messages body; fields the schema does not name are not typed: they pass through as they came. */
export type MessagesBody = Static<typeof MessagesSchema>
export type CountTokensBody = Static<typeof CountTokensSchema>
