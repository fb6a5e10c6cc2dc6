import { Elysia, t } from 'elysia'
import { createMessage, estimateMessagesInputTokens, type MessagesBody } from '../../dispatch/messages'
import { resolveMessagesModel } from '../../dispatch/messages-model'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'
import { JsonInteger } from '../schemas'

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

export function messagesRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/messages' })
    .use(context)
    .post(
      '/v1/messages',
      ({ body, caller, requestId, request }) =>
        createMessage(
          services,
          caller,
          body as MessagesBody,
          {
            version: request.headers.get('anthropic-version'),
            beta: request.headers.get('anthropic-beta'),
            query: new URL(request.url).search,
          },
          requestId,
          request.signal,
        ),
      {
        parse: 'json',
        body: MessagesSchema,
        detail: {
          tags: ['Messages'],
          summary: 'Create a message (Anthropic format), billed to the caller',
          description: 'Bearer or x-api-key; anthropic-version optional. Streams native server-sent events with `stream: true`; the final message_delta usage carries `cost`.',
        },
      },
    )
    .post(
      '/v1/messages/count_tokens',
      async ({ body, caller }) => {
        await resolveMessagesModel(services, caller, body.model)
        return { input_tokens: estimateMessagesInputTokens(body) }
      },
      {
        parse: 'json',
        body: CountTokensSchema,
        response: t.Object({ input_tokens: t.Integer() }),
        detail: {
          tags: ['Messages'],
          summary: "Count a request's input tokens: the gateway's own estimate, the one holds are sized from; free",
        },
      },
    )
}
