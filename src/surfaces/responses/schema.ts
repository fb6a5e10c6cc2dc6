import { type Static, t } from 'elysia'
import { JsonInteger } from '../../http/schemas'

/** The fields the gateway checks; everything else passes through to native routes. */
export const ResponsesSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    input: t.Union([t.String(), t.Array(t.Record(t.String(), t.Unknown()))]),
    instructions: t.Optional(t.Union([t.String(), t.Null()])),
    tools: t.Optional(t.Array(t.Record(t.String(), t.Unknown()))),
    tool_choice: t.Optional(t.Union([t.String(), t.Record(t.String(), t.Unknown())])),
    max_output_tokens: t.Optional(JsonInteger({ minimum: 16 })),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 2 })),
    top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
    stream: t.Optional(t.Boolean()),
    store: t.Optional(t.Boolean()),
    previous_response_id: t.Optional(t.Union([t.String(), t.Null()])),
    reasoning: t.Optional(t.Union([t.Record(t.String(), t.Unknown()), t.Null()])),
    text: t.Optional(t.Record(t.String(), t.Unknown())),
    metadata: t.Optional(t.Union([t.Record(t.String(), t.Unknown()), t.Null()])),
  },
  { additionalProperties: true },
)

/** A checked Responses body; fields the schema does not name are not typed: they pass through as they came. */
export type ResponsesBody = Static<typeof ResponsesSchema>
