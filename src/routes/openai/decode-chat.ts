import type { ImagePart, Message, Prompt, TextPart, ToolCallPart, ToolChoice, ToolDefinition } from '../../spec/prompt'
import { mergeTurns, parseToolArguments } from '../../spec/tool-arguments'

/**
 * A chat completions request (https://platform.openai.com/docs/api-reference/chat/create) as
 * the canonical prompt, for routes that do not speak it natively. System and developer
 * messages become the system text; tool calls and tool results keep their ids.
 */
type Json = Record<string, unknown>

export function decodeChatRequest(body: Json): Prompt {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : []
  const system = messages.filter((message) => message.role === 'system' || message.role === 'developer').map((message) => textOf(message.content))
  const maxTokens = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : typeof body.max_tokens === 'number' ? body.max_tokens : undefined
  return {
    system: system.filter(Boolean).join('\n\n') || undefined,
    messages: mergeTurns(messages.flatMap(decodeMessage)),
    tools: tools(body.tools),
    toolChoice: toolChoice(body.tool_choice),
    maxOutputTokens: maxTokens,
    temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
    topP: typeof body.top_p === 'number' ? body.top_p : undefined,
    stopSequences: typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((stop): stop is string => typeof stop === 'string') : undefined,
    stream: body.stream === true,
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Json[]).flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n')
}

function decodeMessage(message: Json): Message[] {
  if (message.role === 'user') {
    const parts: (TextPart | ImagePart)[] =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : (Array.isArray(message.content) ? (message.content as Json[]) : []).flatMap((part): (TextPart | ImagePart)[] => {
            if (part.type === 'text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }]
            if (part.type === 'image_url') return [imagePart(part.image_url)]
            return []
          })
    return parts.length > 0 ? [{ role: 'user', content: parts }] : []
  }
  if (message.role === 'assistant') {
    const text = textOf(message.content)
    const calls = (Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : []).map((call): ToolCallPart => {
      const fn = (call.function ?? {}) as { name?: string; arguments?: string }
      return { type: 'tool-call', id: String(call.id), name: fn.name ?? '', input: parseToolArguments(fn.arguments ?? '') }
    })
    const content = [...(text ? [{ type: 'text' as const, text }] : []), ...calls]
    return content.length > 0 ? [{ role: 'assistant', content }] : []
  }
  if (message.role === 'tool') {
    return [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: String(message.tool_call_id), content: textOf(message.content) }] }]
  }
  return []
}

function imagePart(imageUrl: unknown): ImagePart {
  const url = typeof imageUrl === 'string' ? imageUrl : String((imageUrl as { url?: unknown } | undefined)?.url ?? '')
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  return inline ? { type: 'image', mediaType: inline[1], data: inline[2] } : { type: 'image', url }
}

function tools(value: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(value)) return undefined
  return (value as Json[]).flatMap((tool) => {
    const fn = tool.function as { name?: string; description?: string; parameters?: Json } | undefined
    if (tool.type !== 'function' || !fn?.name) return []
    return [{ name: fn.name, ...(fn.description ? { description: fn.description } : {}), inputSchema: fn.parameters ?? { type: 'object', properties: {} } }]
  })
}

function toolChoice(value: unknown): ToolChoice | undefined {
  if (value === 'auto' || value === 'none') return { type: value }
  if (value === 'required') return { type: 'required' }
  const name = (value as { function?: { name?: unknown } } | undefined)?.function?.name
  return typeof name === 'string' ? { type: 'tool', name } : undefined
}
