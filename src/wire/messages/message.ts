import { type Static, Type } from '@sinclair/typebox'
import type { AssistantBlockParam } from './request'
import { MessagesUsage, type MessagesUsageShown } from './usage'

/**
 * A messages answer (https://docs.claude.com/en/api/messages): a schema for what an upstream
 * sends, checked before it is read, and the type the gateway writes to a client. Only the
 * fields used are named; everything else an upstream sends passes.
 */

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

/** An assistant block as read, from an upstream's answer or a client's earlier turn. */
export type AssistantBlock = Static<typeof TextBlock> | Static<typeof ThinkingBlock> | Static<typeof ToolUseBlock>

export const Message = Type.Object({
  id: Type.Optional(Type.String()),
  content: Type.Array(ContentBlock),
  stop_reason: NullableString,
  stop_sequence: NullableString,
  usage: Type.Optional(Type.Union([MessagesUsage, Type.Null()])),
})

/** A message object as the gateway writes it to a client, its usage carrying the call's cost. */
export interface MessageObject {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: AssistantBlockParam[]
  stop_reason: string | null
  stop_sequence: string | null
  usage: MessagesUsageShown
}

/** `code` is not Anthropic's: an upstream speaking its format may add one (another gateway does). */
export const ErrorBody = Type.Object({ error: Type.Object({ message: Type.Optional(Type.Unknown()), code: Type.Optional(Type.Unknown()) }) })
