import { type Static, t } from 'elysia'
import { JsonInteger } from '../../http/schemas'

/** The most choices (`n`) one request may ask for: OpenAI's own limit. */
export const MAX_CHOICES = 128

const MessageSchema = t.Object(
  {
    role: t.String({ minLength: 1 }),
    // Absent or null only on an assistant message that carries tool_calls (checked in surface.ts).
    content: t.Optional(t.Union([t.String(), t.Array(t.Unknown()), t.Null()])),
  },
  { additionalProperties: true },
)

/**
 * The fields the gateway checks; every other OpenAI field (tools, response_format, seed, ...)
 * passes through. The output-token fields are checked against the model's maximum once the
 * model is known (surface.ts).
 */
export const ChatCompletionSchema = t.Object(
  {
    model: t.String({ minLength: 1, description: 'A catalogue id such as openai/gpt-5, an alias tollgate/<name>, or custom/<name>' }),
    messages: t.Array(MessageSchema, { minItems: 1 }),
    max_tokens: t.Optional(JsonInteger({ minimum: 1 })),
    max_completion_tokens: t.Optional(JsonInteger({ minimum: 1 })),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 2 })),
    top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    n: t.Optional(JsonInteger({ minimum: 1, maximum: MAX_CHOICES })),
    stream: t.Optional(t.Boolean()),
    stop: t.Optional(t.Union([t.String(), t.Array(t.String(), { maxItems: 4 })])),
    stream_options: t.Optional(t.Union([t.Object({ include_usage: t.Optional(t.Boolean()) }, { additionalProperties: true }), t.Null()])),
  },
  { additionalProperties: true },
)

/** A checked chat completions body; fields the schema does not name are not typed: they pass through as they came. */
export type ChatCompletionBody = Static<typeof ChatCompletionSchema>
