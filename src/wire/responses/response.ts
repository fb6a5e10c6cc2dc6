import type { ResponsesUsageShown } from './usage'

/**
 * The Responses API's response object and its output items
 * (https://platform.openai.com/docs/api-reference/responses/object), as the gateway writes them
 * to a client, whole or streamed. A native route's upstream writes its own; the gateway reads
 * only its usage (usage.ts).
 */

export type OutputTextPart = { type: 'output_text'; text: string; annotations: [] }

export type MessageItem = {
  type: 'message'
  id: string
  status: 'in_progress' | 'completed'
  role: 'assistant'
  content: (OutputTextPart & { logprobs: [] })[]
}
export type FunctionCallItem = { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: 'in_progress' | 'completed' }
export type ReasoningItem = { type: 'reasoning'; id: string; summary: []; content?: { type: 'reasoning_text'; text: string }[] }

export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed'

export interface ResponseObject {
  id: string
  object: 'response'
  created_at: number
  status: ResponseStatus
  /** On a failed response, the failure (errors/render.ts writes it). */
  error: { code: string; message: string } | null
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null
  instructions: null
  model: string
  output: OutputItem[]
  parallel_tool_calls: true
  previous_response_id: null
  store: false
  text: { format: { type: 'text' } }
  tool_choice: 'auto'
  tools: []
  truncation: 'disabled'
  usage: ResponsesUsageShown | null
  metadata: Record<string, never>
}

/** Where an output item's deltas go: its id and place in the output. */
type ItemPlace = { item_id: string; output_index: number }

/** The events the gateway writes when it encodes a stream in the Responses format: each one's fields after `type` and its sequence number. */
export interface ResponsesEventFields {
  'response.created': { response: ResponseObject }
  'response.in_progress': { response: ResponseObject }
  'response.completed': { response: ResponseObject }
  'response.incomplete': { response: ResponseObject }
  'response.failed': { response: ResponseObject }
  'response.output_item.added': { output_index: number; item: OutputItem }
  'response.output_item.done': { output_index: number; item: OutputItem }
  'response.content_part.added': ItemPlace & { content_index: 0; part: OutputTextPart }
  'response.content_part.done': ItemPlace & { content_index: 0; part: OutputTextPart }
  'response.output_text.delta': ItemPlace & { content_index: 0; delta: string; logprobs: [] }
  'response.reasoning_text.delta': ItemPlace & { content_index: 0; delta: string }
  'response.function_call_arguments.delta': ItemPlace & { delta: string }
  'response.output_text.done': ItemPlace & { content_index: 0; text: string; logprobs: [] }
  'response.reasoning_text.done': ItemPlace & { content_index: 0; text: string }
  'response.function_call_arguments.done': ItemPlace & { name: string; arguments: string }
}

export type ResponsesEventType = keyof ResponsesEventFields
