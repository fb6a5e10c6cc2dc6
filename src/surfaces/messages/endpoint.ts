import { Elysia, t } from 'elysia'
import { callerId } from '../../auth/authenticate'
import type { GatewayContext } from '../../http/gateway-context'
import { answerResponse, errorResponses, eventStream } from '../../http/openapi/responses'
import { refuseInvalidBody } from '../../http/schema-check'
import { JsonInteger } from '../../http/schemas'
import type { Services } from '../../services/services'
import { surfaceEndpoint } from '../endpoint'
import { CountTokensSchema, MessagesSchema } from './schema'
import { estimateMessagesInputTokens, messages, resolveMessagesModel } from './surface'

/** The answer: Anthropic's message; a native provider's own fields pass through. */
const MessageAnswerSchema = t.Object(
  {
    id: t.String(),
    type: t.Literal('message'),
    role: t.Literal('assistant'),
    model: t.String(),
    content: t.Array(t.Object({ type: t.String() }, { additionalProperties: true })),
    stop_reason: t.Union([t.String(), t.Null()]),
    usage: t.Object(
      { input_tokens: JsonInteger({}), output_tokens: JsonInteger({}), cost: t.Number({ description: 'Credits charged' }) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)

export const messagesEndpoint = surfaceEndpoint({
  path: '/v1/messages',
  parse: 'json',
  schema: MessagesSchema,
  surface: messages,
  response: {
    json: MessageAnswerSchema,
    other: answerResponse('The message; with `stream: true`, server-sent events', {
      'text/event-stream': eventStream(
        "Anthropic's events (`message_start`, `content_block_delta`, …, `message_stop`); the final `message_delta` usage carries `cost`",
      ),
    }),
  },
  detail: {
    tags: ['Messages'],
    summary: 'Create a message (Anthropic format), billed to the caller',
    description:
      'Bearer or x-api-key; anthropic-version optional. Streams native server-sent events with `stream: true`; the final message_delta usage carries `cost`.',
  },
})

/** POST /v1/messages/count_tokens: the gateway's own estimate, free; the model must be one the caller may use here. */
export function countTokensEndpoint(context: GatewayContext, services: Pick<Services, 'catalog' | 'customModels' | 'rateLimiter'>) {
  return new Elysia({ name: 'surfaces/messages/count-tokens' }).use(context).post(
    '/v1/messages/count_tokens',
    async ({ body, caller }) => {
      await resolveMessagesModel(services, caller, body.model)
      const tokens = estimateMessagesInputTokens(body)
      await services.rateLimiter.recordFreeTokens(callerId(caller), tokens)
      return { input_tokens: tokens }
    },
    {
      parse: 'json',
      transform: ({ body }) => refuseInvalidBody(CountTokensSchema, body),
      body: CountTokensSchema,
      response: t.Object({ input_tokens: JsonInteger({}) }),
      detail: {
        tags: ['Messages'],
        summary: "Count a request's input tokens: the gateway's own estimate, the one holds are sized from; free",
        responses: errorResponses('messages', [400, 401, 403, 404, 408, 413, 429, 500, 503]),
      },
    },
  )
}
