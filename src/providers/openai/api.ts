import { type Static, Type } from '@sinclair/typebox'
import { WireCount } from '../../wire/decode'

/**
 * OpenAI wire types the gateway writes and reads (https://platform.openai.com/docs/api-reference).
 * Requests are plain types (the gateway builds them); what comes back is a schema as well, so
 * it is checked before it is read. Only the fields used are named; everything else passes.
 */

// ---- Chat completions request (https://platform.openai.com/docs/api-reference/chat/create) ----

export type ChatUserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

export type ChatToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } }

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

export type ChatTool = { type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown> } }

export type ChatToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } }

/** A chat completions body as translation writes it; `model` is added when it is sent. */
export type ChatRequest = {
  messages: ChatMessage[]
  tools?: ChatTool[]
  tool_choice?: ChatToolChoice
  max_tokens?: number
  max_completion_tokens?: number
  temperature?: number
  top_p?: number
  stop?: string[]
  stream?: true
  stream_options?: { include_usage: true }
}

// ---- Chat completions answer, stream chunk and usage ----

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]))

export const ChatUsage = Type.Object({
  prompt_tokens: WireCount,
  completion_tokens: WireCount,
  total_tokens: WireCount,
  prompt_tokens_details: Type.Optional(Type.Union([Type.Object({ cached_tokens: WireCount, cache_write_tokens: WireCount }), Type.Null()])),
  completion_tokens_details: Type.Optional(Type.Union([Type.Object({ reasoning_tokens: WireCount }), Type.Null()])),
})
export type ChatUsage = Static<typeof ChatUsage>

/** `reasoning_content` is not OpenAI's: DeepSeek and other compatible servers send their reasoning there. */
const ChatAssistantMessage = Type.Object({
  content: NullableString,
  reasoning_content: NullableString,
  tool_calls: Type.Optional(
    Type.Union([Type.Array(Type.Object({ id: Type.String(), function: Type.Object({ name: Type.String(), arguments: Type.String() }) })), Type.Null()]),
  ),
})

export const ChatCompletion = Type.Object({
  id: Type.Optional(Type.String()),
  choices: Type.Array(Type.Object({ message: ChatAssistantMessage, finish_reason: NullableString }), { minItems: 1 }),
  usage: Type.Optional(Type.Union([ChatUsage, Type.Null()])),
})
export type ChatCompletion = Static<typeof ChatCompletion>

/** A tool call's fragment in a stream: only the first carries the id and name (only `index` is required). */
const ChatToolCallChunk = Type.Object({
  index: Type.Optional(Type.Number()),
  id: NullableString,
  function: Type.Optional(Type.Object({ name: NullableString, arguments: NullableString })),
})

export const ChatChunk = Type.Object({
  id: Type.Optional(Type.String()),
  choices: Type.Array(
    Type.Object({
      delta: Type.Optional(
        Type.Object({
          content: NullableString,
          reasoning_content: NullableString,
          tool_calls: Type.Optional(Type.Union([Type.Array(ChatToolCallChunk), Type.Null()])),
        }),
      ),
      finish_reason: NullableString,
    }),
  ),
  usage: Type.Optional(Type.Union([ChatUsage, Type.Null()])),
})
export type ChatChunk = Static<typeof ChatChunk>

/** A stream chunk that reports an error instead of content (`data: {"error": {...}}`). */
export const ChatStreamError = Type.Object({ error: Type.Object({ message: Type.Optional(Type.String()) }) })

// ---- Responses API usage (https://platform.openai.com/docs/api-reference/responses/object) ----

export const ResponsesUsage = Type.Object({
  input_tokens: WireCount,
  output_tokens: WireCount,
  input_tokens_details: Type.Optional(Type.Union([Type.Object({ cached_tokens: WireCount }), Type.Null()])),
})
export type ResponsesUsage = Static<typeof ResponsesUsage>

// ---- Videos (https://platform.openai.com/docs/api-reference/videos/object) ----

export const VideoResource = Type.Object({
  id: Type.String({ minLength: 1 }),
  status: Type.Union([Type.Literal('queued'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('failed')]),
  seconds: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Null()])),
  error: Type.Optional(Type.Union([Type.Object({ code: NullableString, message: NullableString }), Type.Null()])),
})
export type VideoResource = Static<typeof VideoResource>

// ---- Errors (every endpoint) ----

export const ErrorBody = Type.Object({
  error: Type.Object({ message: Type.Optional(Type.Unknown()), param: Type.Optional(Type.Unknown()), code: Type.Optional(Type.Unknown()) }),
})
