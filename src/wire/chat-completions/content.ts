import type { ToolCallPart } from '../../canonical/prompt'
import { parseToolArguments } from '../../canonical/tool-arguments'
import type { ChatToolCall } from './request'

/**
 * Canonical parts and chat completions fields, both ways: the one mapping behind a client's
 * request, an upstream's request and answer, and the answer a client reads.
 */

/** A tool call as the format writes it: its input as JSON text. */
export function chatToolCallOf(part: ToolCallPart): ChatToolCall {
  return { id: part.id, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.input ?? {}) } }
}

/** A tool call read back: its arguments parsed (parseToolArguments keeps text that is not JSON). */
export function toolCallPartOf(call: { id: string; function: { name: string; arguments: string } }): ToolCallPart {
  return { type: 'tool-call', id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) }
}
