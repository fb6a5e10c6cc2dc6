import type { ImagePart, Message, Prompt, TextPart, ToolChoice, ToolDefinition } from '../../spec/prompt'
import { mergeTurns, parseToolArguments } from '../../spec/tool-arguments'

/**
 * A Responses API request (https://platform.openai.com/docs/api-reference/responses/create) as
 * the canonical prompt, for routes that do not serve that API: message items (with input_text,
 * input_image and output_text parts), function_call and function_call_output items. Reasoning
 * items and hosted tools have no canonical form and are left out.
 */
type Json = Record<string, unknown>

export function decodeResponsesRequest(body: Json): Prompt {
  const items: Json[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? (body.input as Json[]) : []
  const system = [typeof body.instructions === 'string' ? body.instructions : '']
  const messages: Message[] = []
  for (const item of items) {
    if (item.role === 'system' || item.role === 'developer') system.push(textOf(item.content))
    else messages.push(...decodeItem(item))
  }
  return {
    system: system.filter(Boolean).join('\n\n') || undefined,
    messages: mergeTurns(messages),
    tools: tools(body.tools),
    toolChoice: toolChoice(body.tool_choice),
    maxOutputTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined,
    temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
    topP: typeof body.top_p === 'number' ? body.top_p : undefined,
    stream: body.stream === true,
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Json[]).flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('\n')
}

function decodeItem(item: Json): Message[] {
  if (item.type === 'function_call') {
    return [{ role: 'assistant', content: [{ type: 'tool-call', id: String(item.call_id), name: String(item.name), input: parseToolArguments(String(item.arguments ?? '')) }] }]
  }
  if (item.type === 'function_call_output') {
    return [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: String(item.call_id), content: typeof item.output === 'string' ? item.output : JSON.stringify(item.output) }] }]
  }
  if (item.role === 'assistant') {
    const text = textOf(item.content)
    return text ? [{ role: 'assistant', content: [{ type: 'text', text }] }] : []
  }
  if (item.role !== 'user') return []
  const parts: (TextPart | ImagePart)[] =
    typeof item.content === 'string'
      ? [{ type: 'text', text: item.content }]
      : (Array.isArray(item.content) ? (item.content as Json[]) : []).flatMap((part): (TextPart | ImagePart)[] => {
          if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') return [{ type: 'text', text: part.text }]
          if (part.type === 'input_image' && typeof part.image_url === 'string') {
            const inline = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url)
            return [inline ? { type: 'image', mediaType: inline[1], data: inline[2] } : { type: 'image', url: part.image_url }]
          }
          return []
        })
  return parts.length > 0 ? [{ role: 'user', content: parts }] : []
}

function tools(value: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(value)) return undefined
  return (value as Json[]).flatMap((tool) =>
    tool.type === 'function' && typeof tool.name === 'string'
      ? [{ name: tool.name, ...(typeof tool.description === 'string' ? { description: tool.description } : {}), inputSchema: (tool.parameters as Json | undefined) ?? { type: 'object', properties: {} } }]
      : [],
  )
}

function toolChoice(value: unknown): ToolChoice | undefined {
  if (value === 'auto' || value === 'none' || value === 'required') return { type: value }
  const name = (value as { type?: unknown; name?: unknown } | undefined)?.name
  return typeof name === 'string' ? { type: 'tool', name } : undefined
}
