import { t } from 'elysia'
import { answerResponse, eventStream } from '../../http/openapi/responses'
import { JsonInteger } from '../../http/schemas'
import { surfaceEndpoint } from '../endpoint'
import { ResponsesSchema } from './schema'
import { responses } from './surface'

/** The answer: OpenAI's response object; a native provider's own fields pass through. */
const ResponseAnswerSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal('response'),
    created_at: t.Number(),
    model: t.String(),
    status: t.String(),
    output: t.Array(t.Object({ type: t.String() }, { additionalProperties: true })),
    usage: t.Object(
      { input_tokens: JsonInteger({}), output_tokens: JsonInteger({}), total_tokens: JsonInteger({}), cost: t.Number({ description: 'Credits charged' }) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)

export const responsesEndpoint = surfaceEndpoint({
  path: '/v1/responses',
  parse: 'json',
  schema: ResponsesSchema,
  surface: responses,
  response: {
    json: ResponseAnswerSchema,
    other: answerResponse('The response; with `stream: true`, server-sent events', {
      'text/event-stream': eventStream('`event: response.*` events; `response.completed` carries the response with `usage.cost`'),
    }),
  },
  detail: {
    tags: ['Responses'],
    summary: "Create a model response (OpenAI's Responses API), billed to the caller",
    description:
      'Served natively by providers with the Responses API, by translation for every other chat model (previous_response_id and store: true need a native route). usage.cost on the response and on response.completed. ' +
      'Also over a WebSocket (Codex CLI with supports_websockets): GET /v1/responses with Upgrade: websocket and the same credentials; each {"type":"response.create", ...body} message is one billed call answered with the stream events, one JSON text message each (docs/api.md#responses-over-websocket).',
  },
})
