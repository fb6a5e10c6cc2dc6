import type { JsonSchema } from '../../canonical/prompt'

/**
 * A messages request (https://docs.claude.com/en/api/messages) as the gateway reads it from a
 * client and writes it to an upstream: the same types in both directions. Only the fields read
 * or written are named; a native route passes every other field on as it came.
 */

export type ImageSource = { type: 'url'; url: string } | { type: 'base64'; media_type: string; data: string }

export type TextBlockParam = { type: 'text'; text: string }
export type ImageBlockParam = { type: 'image'; source: ImageSource }
export type ThinkingBlockParam = { type: 'thinking'; thinking: string; signature: string }
export type ToolUseBlockParam = { type: 'tool_use'; id: string; name: string; input: unknown }
export type ToolResultBlockParam = {
  type: 'tool_result'
  tool_use_id: string
  content: string | (TextBlockParam | ImageBlockParam)[]
  is_error?: true
}

export type UserBlockParam = TextBlockParam | ImageBlockParam
export type AssistantBlockParam = TextBlockParam | ThinkingBlockParam | ToolUseBlockParam
export type ContentBlockParam = UserBlockParam | AssistantBlockParam | ToolResultBlockParam

export type MessageParam = { role: 'user' | 'assistant'; content: ContentBlockParam[] }

export type ToolChoiceParam = { type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string }

/** A client tool; provider-hosted tools carry a versioned `type` instead of an input schema. */
export type ToolParam = { name: string; description?: string; input_schema: JsonSchema }

/** A messages body; `model` is added when it is sent (Vertex names it in the URL). */
export type MessagesRequest = {
  system?: string
  messages: MessageParam[]
  max_tokens: number
  tools?: ToolParam[]
  tool_choice?: ToolChoiceParam
  temperature?: number
  top_p?: number
  stop_sequences?: string[]
  stream?: true
}
