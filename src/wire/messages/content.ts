import type { ImagePart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart } from '../../canonical/prompt'
import type { AssistantBlock } from './message'
import type { AssistantBlockParam, ToolResultBlockParam, UserBlockParam } from './request'

/**
 * Canonical parts and messages-format content blocks (https://docs.claude.com/en/api/messages),
 * both ways: the one mapping behind a client's request, an upstream's request and answer, and
 * the answer a client reads.
 */

export function assistantBlockOf(part: TextPart | ReasoningPart | ToolCallPart): AssistantBlockParam {
  if (part.type === 'text') return { type: 'text', text: part.text }
  if (part.type === 'reasoning') return { type: 'thinking', thinking: part.text, signature: part.signature ?? '' }
  return { type: 'tool_use', id: part.id, name: part.name, input: part.input ?? {} }
}

export function assistantPartOf(block: AssistantBlock): TextPart | ReasoningPart | ToolCallPart {
  if (block.type === 'text') return { type: 'text', text: block.text }
  if (block.type === 'thinking') return { type: 'reasoning', text: block.thinking, ...(block.signature !== undefined ? { signature: block.signature } : {}) }
  return { type: 'tool-call', id: block.id, name: block.name, input: block.input ?? {} }
}

export function userBlockOf(part: TextPart | ImagePart): UserBlockParam {
  if (part.type === 'text') return { type: 'text', text: part.text }
  return part.url
    ? { type: 'image', source: { type: 'url', url: part.url } }
    : { type: 'image', source: { type: 'base64', media_type: part.mediaType ?? 'image/png', data: part.data ?? '' } }
}

export function userPartOf(block: UserBlockParam): TextPart | ImagePart {
  if (block.type === 'text') return { type: 'text', text: block.text }
  const source = block.source
  return source.type === 'url' ? { type: 'image', url: source.url } : { type: 'image', data: source.data, mediaType: source.media_type }
}

export function toolResultBlockOf(result: ToolResultPart): ToolResultBlockParam {
  return {
    type: 'tool_result',
    tool_use_id: result.toolCallId,
    content: typeof result.content === 'string' ? result.content : result.content.map(userBlockOf),
    ...(result.isError ? { is_error: true as const } : {}),
  }
}

export function toolResultPartOf(block: ToolResultBlockParam): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: block.tool_use_id,
    content: typeof block.content === 'string' ? block.content : block.content.map(userPartOf),
    ...(block.is_error ? { isError: true } : {}),
  }
}
