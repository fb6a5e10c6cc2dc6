import { Elysia, t } from 'elysia'
import { chatCompletion, MAX_CHOICES, type ChatBody } from '../../dispatch/chat-completion'
import { InvalidRequestError } from '../../errors/kinds'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'
import { JsonInteger } from '../schemas'

const MessageSchema = t.Object(
  {
    role: t.String({ minLength: 1 }),
    // Absent or null only on an assistant message that carries tool_calls (checked below).
    content: t.Optional(t.Union([t.String(), t.Array(t.Unknown()), t.Null()])),
  },
  { additionalProperties: true },
)

/**
 * The fields the gateway checks; every other OpenAI field (tools, response_format, seed, ...)
 * passes through. The output-token fields are checked against the model's maximum once the
 * model is known (dispatch/chat-completion.ts).
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

export function chatCompletionRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/chat-completions' }).use(context).post(
    '/v1/chat/completions',
    ({ body, caller, requestId, request }) => {
      checkMessages(body.messages)
      return chatCompletion(services, caller, body as ChatBody, requestId, request.signal)
    },
    {
      parse: 'json',
      body: ChatCompletionSchema,
      detail: {
        tags: ['Chat'],
        summary: 'Create a chat completion (OpenAI format), billed to the caller',
        description: 'Streams as server-sent events with `stream: true`. Non-streaming answers carry `usage.cost` in credits; streams carry it in the usage chunk when `stream_options.include_usage` is set.',
      },
    },
  )
}

/**
 * A message may go without content (absent or null) only when it is an assistant turn that
 * called tools: OpenAI's rule (CONTRACT.md §7), checked here so a translated route never
 * receives an empty turn the upstream would refuse with an error of its own.
 */
function checkMessages(messages: { role: string; content?: unknown; tool_calls?: unknown }[]): void {
  messages.forEach((message, index) => {
    if (message.content !== undefined && message.content !== null) return
    if (message.role === 'assistant' && Array.isArray(message.tool_calls)) return
    const param = `messages[${index}].content`
    throw new InvalidRequestError(
      message.content === null ? `${param} may be null only on an assistant message with tool_calls.` : `${param} is required.`,
      { param },
    )
  })
}
