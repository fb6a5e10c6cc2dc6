import type { ImagePart, Message, Prompt, TextPart, ToolChoice, ToolDefinition } from '../../canonical/prompt'
import { mergeTurns } from '../../canonical/tool-arguments'
import { type ClientObject, objectsIn, requireString, stringOr } from '../../http/json-fields'
import { isRecord } from '../../util/is-record'
import { toolCallPartOf } from '../../wire/chat-completions/content'
import type { ChatToolCall } from '../../wire/chat-completions/request'
import { imagePartOf } from '../../wire/data-url'
import type { ChatCompletionBody } from './schema'

/**
 * A chat completions request (https://platform.openai.com/docs/api-reference/chat/create) as
 * the canonical prompt, for routes that do not speak it natively. System and developer
 * messages become the system text; tool calls and tool results keep their ids.
 */

/** What the decoder reads: the checked sampling fields, and messages and tools read field by field. */
export type ChatPromptSource = Pick<ChatCompletionBody, 'max_tokens' | 'max_completion_tokens' | 'temperature' | 'top_p' | 'stop' | 'stream'> & {
  messages: ClientObject[]
  tools?: unknown
  tool_choice?: unknown
}

export function decodeChatRequest(body: ChatPromptSource): Prompt {
  const { messages } = body
  const system = messages.filter((message) => message.role === 'system' || message.role === 'developer').map((message) => textOf(message.content))
  const maxTokens =
    typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : typeof body.max_tokens === 'number' ? body.max_tokens : undefined
  return {
    system: system.filter(Boolean).join('\n\n') || undefined,
    messages: mergeTurns(messages.flatMap((message, index) => decodeMessage(message, `messages[${index}]`))),
    tools: tools(body.tools),
    toolChoice: toolChoice(body.tool_choice),
    maxOutputTokens: maxTokens,
    temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
    topP: typeof body.top_p === 'number' ? body.top_p : undefined,
    stopSequences:
      typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((stop): stop is string => typeof stop === 'string') : undefined,
    stream: body.stream === true,
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return objectsIn(content)
    .flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join('\n')
}

function decodeMessage(message: ClientObject, param: string): Message[] {
  if (message.role === 'user') {
    const parts: (TextPart | ImagePart)[] =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : objectsIn(message.content).flatMap((part): (TextPart | ImagePart)[] => {
            if (part.type === 'text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }]
            if (part.type === 'image_url') return [imagePart(part.image_url)]
            return []
          })
    return parts.length > 0 ? [{ role: 'user', content: parts }] : []
  }
  if (message.role === 'assistant') {
    const text = textOf(message.content)
    const calls = objectsIn(message.tool_calls).map((call, index) => toolCallPartOf(toolCallIn(call, `${param}.tool_calls[${index}]`)))
    const content = [...(text ? [{ type: 'text' as const, text }] : []), ...calls]
    return content.length > 0 ? [{ role: 'assistant', content }] : []
  }
  if (message.role === 'tool') {
    return [
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: requireString(message.tool_call_id, `${param}.tool_call_id`), content: textOf(message.content) }],
      },
    ]
  }
  return []
}

/** A client's tool call: its id is required; a missing name or arguments read as empty. */
function toolCallIn(call: ClientObject, at: string): ChatToolCall {
  const fn = isRecord(call.function) ? call.function : {}
  return { id: requireString(call.id, `${at}.id`), type: 'function', function: { name: stringOr(fn.name, ''), arguments: stringOr(fn.arguments, '') } }
}

function imagePart(imageUrl: unknown): ImagePart {
  return imagePartOf(typeof imageUrl === 'string' ? imageUrl : isRecord(imageUrl) ? stringOr(imageUrl.url, '') : '')
}

function tools(value: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(value)) return undefined
  return objectsIn(value).flatMap((tool) => {
    const fn = isRecord(tool.function) ? tool.function : {}
    if (tool.type !== 'function' || typeof fn.name !== 'string' || !fn.name) return []
    const description = stringOr(fn.description, '')
    return [
      { name: fn.name, ...(description ? { description } : {}), inputSchema: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } },
    ]
  })
}

function toolChoice(value: unknown): ToolChoice | undefined {
  if (value === 'auto' || value === 'none') return { type: value }
  if (value === 'required') return { type: 'required' }
  const name = isRecord(value) && isRecord(value.function) ? value.function.name : undefined
  return typeof name === 'string' ? { type: 'tool', name } : undefined
}
