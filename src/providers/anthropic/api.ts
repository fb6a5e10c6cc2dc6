import { type Static, Type } from '@sinclair/typebox'
import { WireCount } from '../decode'

/**
 * Anthropic messages wire types the gateway writes and reads (https://docs.claude.com/en/api/messages).
 * Requests are plain types (the gateway builds them); what comes back is a schema as well, so
 * it is checked before it is read. Only the fields used are named; everything else passes.
 */

/** The API version sent upstream when the client names none (the header is optional for clients). */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01'

// ---- Request ----

export type ImageSource = { type: 'url'; url: string } | { type: 'base64'; media_type: string; data: string }

export type TextBlockParam = { type: 'text'; text: string }
export type ImageBlockParam = { type: 'image'; source: ImageSource }

export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string | (TextBlockParam | ImageBlockParam)[]; is_error?: true }

export type MessageParam = { role: 'user' | 'assistant'; content: ContentBlockParam[] }

export type ToolChoiceParam = { type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string }

/** A messages body as translation writes it; `model` is added when it is sent (Vertex names it in the URL). */
export type MessagesRequest = {
  system?: string
  messages: MessageParam[]
  max_tokens: number
  tools?: { name: string; description?: string; input_schema: Record<string, unknown> }[]
  tool_choice?: ToolChoiceParam
  temperature?: number
  top_p?: number
  stop_sequences?: string[]
  stream?: true
}

// ---- Usage, answer and stream events ----

export const MessagesUsage = Type.Object({
  input_tokens: WireCount,
  output_tokens: WireCount,
  cache_creation_input_tokens: WireCount,
  cache_read_input_tokens: WireCount,
  server_tool_use: Type.Optional(Type.Union([Type.Object({ web_search_requests: WireCount }), Type.Null()])),
})
export type MessagesUsage = Static<typeof MessagesUsage>

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]))

/**
 * Any content block: its `type` says which. Server tool blocks (web search and its results)
 * have no canonical form; the ones read are checked against the schemas below.
 */
export const ContentBlock = Type.Object({ type: Type.String() })
export const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() })
export const ThinkingBlock = Type.Object({ type: Type.Literal('thinking'), thinking: Type.String(), signature: Type.Optional(Type.String()) })
export const ToolUseBlock = Type.Object({
  type: Type.Literal('tool_use'),
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  input: Type.Optional(Type.Unknown()),
})

export const Message = Type.Object({
  id: Type.Optional(Type.String()),
  content: Type.Array(ContentBlock),
  stop_reason: NullableString,
  stop_sequence: NullableString,
  usage: Type.Optional(Type.Union([MessagesUsage, Type.Null()])),
})

/** Any stream event; `type` repeats the SSE event name (https://docs.claude.com/en/docs/build-with-claude/streaming). */
export const StreamEvent = Type.Object({ type: Type.Optional(Type.String()) })

export const MessageStartEvent = Type.Object({
  message: Type.Object({ id: Type.Optional(Type.String()), usage: Type.Optional(Type.Union([MessagesUsage, Type.Null()])) }),
})

export const ContentBlockStartEvent = Type.Object({ index: Type.Number(), content_block: ContentBlock })

export const ContentBlockDeltaEvent = Type.Object({ index: Type.Number(), delta: Type.Object({ type: Type.String() }) })
export type ContentBlockDeltaEvent = Static<typeof ContentBlockDeltaEvent>
export const TextDelta = Type.Object({ type: Type.Literal('text_delta'), text: Type.String() })
export const ThinkingDelta = Type.Object({ type: Type.Literal('thinking_delta'), thinking: Type.String() })
export const SignatureDelta = Type.Object({ type: Type.Literal('signature_delta'), signature: Type.String() })
export const InputJsonDelta = Type.Object({ type: Type.Literal('input_json_delta'), partial_json: Type.String() })

/** `usage` here is cumulative, and may repeat the input counts (or send them as null). */
export const MessageDeltaEvent = Type.Object({
  delta: Type.Object({ stop_reason: NullableString, stop_sequence: NullableString }),
  usage: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
})

export const ErrorEvent = Type.Object({ error: Type.Optional(Type.Object({ type: Type.Optional(Type.String()), message: Type.Optional(Type.String()) })) })

// ---- Errors ----

/** `code` is not Anthropic's: an upstream speaking its format may add one (another gateway does). */
export const ErrorBody = Type.Object({ error: Type.Object({ message: Type.Optional(Type.Unknown()), code: Type.Optional(Type.Unknown()) }) })
