import type { ImagePart, Message, Prompt, TextPart, ToolChoice, ToolDefinition } from '../../canonical/prompt'
import { mergeTurns } from '../../canonical/tool-arguments'
import { type ClientObject, objectsIn, requireString, stringOr } from '../../http/json-fields'
import { isRecord } from '../../util/is-record'
import { imagePartOf } from '../../wire/data-url'
import { toolCallPartOf, toolResultPartOf } from '../../wire/responses/content'
import type { ResponsesBody } from './schema'

/**
 * A Responses API request (https://platform.openai.com/docs/api-reference/responses/create) as
 * the canonical prompt, for routes that do not serve that API: message items (with input_text,
 * input_image and output_text parts), function_call and function_call_output items. Reasoning
 * items and hosted tools have no canonical form and are left out.
 */

/** What the decoder reads: the checked fields, with input items and tools read field by field. */
export type ResponsesPromptSource = Pick<ResponsesBody, 'input' | 'instructions' | 'max_output_tokens' | 'temperature' | 'top_p' | 'stream'> & {
  tools?: unknown
  tool_choice?: unknown
}

export function decodeResponsesRequest(body: ResponsesPromptSource): Prompt {
  const items: ClientObject[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input
  const system = [typeof body.instructions === 'string' ? body.instructions : '']
  const messages: Message[] = []
  items.forEach((item, index) => {
    if (item.role === 'system' || item.role === 'developer') system.push(textOf(item.content))
    else messages.push(...decodeItem(item, `input[${index}]`))
  })
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
  return objectsIn(content)
    .flatMap((part) => (typeof part.text === 'string' ? [part.text] : []))
    .join('\n')
}

function decodeItem(item: ClientObject, param: string): Message[] {
  if (item.type === 'function_call') {
    const call = toolCallPartOf({
      type: 'function_call',
      call_id: requireString(item.call_id, `${param}.call_id`),
      name: requireString(item.name, `${param}.name`),
      arguments: stringOr(item.arguments, ''),
    })
    return [{ role: 'assistant', content: [call] }]
  }
  if (item.type === 'function_call_output') {
    const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output)
    return [{ role: 'tool', content: [toolResultPartOf({ type: 'function_call_output', call_id: requireString(item.call_id, `${param}.call_id`), output })] }]
  }
  if (item.role === 'assistant') {
    const text = textOf(item.content)
    return text ? [{ role: 'assistant', content: [{ type: 'text', text }] }] : []
  }
  if (item.role !== 'user') return []
  const parts: (TextPart | ImagePart)[] =
    typeof item.content === 'string'
      ? [{ type: 'text', text: item.content }]
      : objectsIn(item.content).flatMap((part): (TextPart | ImagePart)[] => {
          if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') return [{ type: 'text', text: part.text }]
          if (part.type === 'input_image' && typeof part.image_url === 'string') return [imagePartOf(part.image_url)]
          return []
        })
  return parts.length > 0 ? [{ role: 'user', content: parts }] : []
}

function tools(value: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(value)) return undefined
  return objectsIn(value).flatMap((tool) =>
    tool.type === 'function' && typeof tool.name === 'string'
      ? [
          {
            name: tool.name,
            ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
            inputSchema: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
          },
        ]
      : [],
  )
}

function toolChoice(value: unknown): ToolChoice | undefined {
  if (value === 'auto' || value === 'none' || value === 'required') return { type: value }
  const name = isRecord(value) ? value.name : undefined
  return typeof name === 'string' ? { type: 'tool', name } : undefined
}
