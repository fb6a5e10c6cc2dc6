import { t } from 'elysia'
import { answerResponse, eventStream } from '../../http/openapi/responses'
import { JsonInteger } from '../../http/schemas'
import { surfaceEndpoint } from '../endpoint'
import { ChatCompletionSchema } from './schema'
import { chatCompletions } from './surface'

/** The answer: OpenAI's chat completion; a native provider's own fields pass through. */
const ChatCompletionAnswerSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal('chat.completion'),
    created: JsonInteger({}),
    model: t.String(),
    choices: t.Array(
      t.Object(
        {
          index: JsonInteger({}),
          message: t.Object({ role: t.String(), content: t.Union([t.String(), t.Null()]) }, { additionalProperties: true }),
          finish_reason: t.Union([t.String(), t.Null()]),
        },
        { additionalProperties: true },
      ),
    ),
    usage: t.Object(
      { prompt_tokens: JsonInteger({}), completion_tokens: JsonInteger({}), total_tokens: JsonInteger({}), cost: t.Number({ description: 'Credits charged' }) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)

export const chatCompletionsEndpoint = surfaceEndpoint({
  path: '/v1/chat/completions',
  parse: 'json',
  schema: ChatCompletionSchema,
  surface: chatCompletions,
  response: {
    json: ChatCompletionAnswerSchema,
    other: answerResponse('The completion; with `stream: true`, server-sent events', {
      'text/event-stream': eventStream(
        '`data: <chat.completion.chunk JSON>` events, then `data: [DONE]`; the usage chunk (with `stream_options.include_usage`) carries `usage.cost`',
      ),
    }),
  },
  detail: {
    tags: ['Chat'],
    summary: 'Create a chat completion (OpenAI format), billed to the caller',
    description:
      'Streams as server-sent events with `stream: true`. Non-streaming answers carry `usage.cost` in credits; streams carry it in the usage chunk when `stream_options.include_usage` is set.',
  },
})
