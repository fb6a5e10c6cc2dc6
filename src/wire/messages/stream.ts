import { type Static, Type } from '@sinclair/typebox'
import type { AssistantBlockParam } from './request'
import { MessagesUsage, type MessagesUsageShown } from './usage'

/**
 * Messages stream events (https://docs.claude.com/en/docs/build-with-claude/streaming): schemas
 * for what an upstream sends, checked before they are read, and the events the gateway writes.
 * `type` repeats the SSE event name.
 */

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]))
const AnyBlock = Type.Object({ type: Type.String() })

/** Any stream event. */
export const StreamEvent = Type.Object({ type: Type.Optional(Type.String()) })

export const MessageStartEvent = Type.Object({
  message: Type.Object({ id: Type.Optional(Type.String()), usage: Type.Optional(Type.Union([MessagesUsage, Type.Null()])) }),
})

export const ContentBlockStartEvent = Type.Object({ index: Type.Number(), content_block: AnyBlock })

export const ContentBlockDeltaEvent = Type.Object({ index: Type.Number(), delta: Type.Object({ type: Type.String() }) })
export type ContentBlockDeltaEvent = Static<typeof ContentBlockDeltaEvent>
export const TextDelta = Type.Object({ type: Type.Literal('text_delta'), text: Type.String() })
export const ThinkingDelta = Type.Object({ type: Type.Literal('thinking_delta'), thinking: Type.String() })
export const SignatureDelta = Type.Object({ type: Type.Literal('signature_delta'), signature: Type.String() })
export const InputJsonDelta = Type.Object({ type: Type.Literal('input_json_delta'), partial_json: Type.String() })

/** `usage` here is cumulative, and may repeat the input counts (or send them as null): updateStreamUsage reads it. */
export const MessageDeltaEvent = Type.Object({
  delta: Type.Object({ stop_reason: NullableString, stop_sequence: NullableString }),
  usage: Type.Optional(Type.Union([MessagesUsage, Type.Null()])),
})

export const ErrorEvent = Type.Object({ error: Type.Optional(Type.Object({ type: Type.Optional(Type.String()), message: Type.Optional(Type.String()) })) })

// ---- Written to a client ----

export type Delta = Static<typeof TextDelta> | Static<typeof ThinkingDelta> | Static<typeof SignatureDelta> | Static<typeof InputJsonDelta>

/** The events the gateway writes when it encodes a stream in the messages format. */
export type WrittenStreamEvent =
  | {
      type: 'message_start'
      message: {
        id: string
        type: 'message'
        role: 'assistant'
        model: string
        content: []
        stop_reason: null
        stop_sequence: null
        usage: { input_tokens: number; output_tokens: number }
      }
    }
  | { type: 'content_block_start'; index: number; content_block: AssistantBlockParam }
  | { type: 'content_block_delta'; index: number; delta: Delta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: string; stop_sequence: string | null }; usage: MessagesUsageShown }
  | { type: 'message_stop' }
