import { Elysia, t } from 'elysia'
import { createResponse, type ResponsesBody } from '../../dispatch/responses'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'
import { JsonInteger } from '../schemas'

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

export function responsesRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/responses' }).use(context).post(
    '/v1/responses',
    ({ body, caller, requestId, request }) => createResponse(services, caller, body as ResponsesBody, requestId, request.signal),
    {
      parse: 'json',
      body: ResponsesSchema,
      detail: {
        tags: ['Responses'],
        summary: "Create a model response (OpenAI's Responses API), billed to the caller",
        description: 'Served natively by providers with the Responses API, by translation for every other chat model (previous_response_id and store: true need a native route). usage.cost on the response and on response.completed.',
      },
    },
  )
}
