import type { ReasoningPart, TextPart, ToolCallPart, ToolResultPart } from '../../canonical/prompt'
import { parseToolArguments } from '../../canonical/tool-arguments'
import type { FunctionCallInput, FunctionCallOutputInput } from './request'
import type { OutputItem } from './response'

/**
 * Canonical parts and Responses API items, both ways: a client's input items read, and the
 * output items a client reads written.
 */

/** A canonical part as the completed output item that carries it. */
export function outputItemOf(part: TextPart | ReasoningPart | ToolCallPart, id: string): OutputItem {
  if (part.type === 'reasoning') return { type: 'reasoning', id, summary: [], content: [{ type: 'reasoning_text', text: part.text }] }
  if (part.type === 'tool-call')
    return { type: 'function_call', id, call_id: part.id, name: part.name, arguments: JSON.stringify(part.input ?? {}), status: 'completed' }
  return { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: part.text, annotations: [], logprobs: [] }] }
}

export function toolCallPartOf(item: FunctionCallInput): ToolCallPart {
  return { type: 'tool-call', id: item.call_id, name: item.name, input: parseToolArguments(item.arguments) }
}

export function toolResultPartOf(item: FunctionCallOutputInput): ToolResultPart {
  return { type: 'tool-result', toolCallId: item.call_id, content: item.output }
}
