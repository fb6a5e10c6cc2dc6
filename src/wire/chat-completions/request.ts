import type { JsonSchema } from '../../canonical/prompt'

/**
 * A chat completions request (https://platform.openai.com/docs/api-reference/chat/create) as
 * the gateway reads it from a client and writes it to an upstream: the same types in both
 * directions. Only the fields read or written are named; a native route passes every other
 * field on as it came.
 */

export type ChatUserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

export type ChatToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } }

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

export type ChatTool = { type: 'function'; function: { name: string; description?: string; parameters: JsonSchema } }

export type ChatToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } }

/** A chat completions body; `model` is added when it is sent. */
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
