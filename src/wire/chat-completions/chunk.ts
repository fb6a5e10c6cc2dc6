import { type Static, Type } from '@sinclair/typebox'
import { ChatUsage } from './usage'

/**
 * A chat.completion.chunk (https://platform.openai.com/docs/api-reference/chat-streaming): a
 * schema for what an upstream streams, checked before it is read, and the deltas the gateway
 * writes. Only the fields used are named.
 */

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]))

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

/** The delta of a chunk the gateway writes: the role first, then text, reasoning or a tool call's start or arguments. */
export type WrittenDelta =
  | { role: 'assistant'; content: '' }
  | { content: string }
  | { reasoning_content: string }
  | { tool_calls: [{ index: number; id: string; type: 'function'; function: { name: string; arguments: '' } }] }
  | { tool_calls: [{ index: number; function: { arguments: string } }] }
  | Record<string, never>
