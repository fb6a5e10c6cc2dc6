import type { Message, Prompt, ToolChoice, ToolDefinition } from '../../canonical/prompt'
import { type ClientObject, objectsIn, requireString } from '../../http/json-fields'
import { isRecord } from '../../util/is-record'
import { assistantPartOf, toolResultPartOf, userPartOf } from '../../wire/messages/content'
import type { AssistantBlock } from '../../wire/messages/message'
import type { ToolResultBlockParam, UserBlockParam } from '../../wire/messages/request'
import type { MessagesBody } from './schema'

/** What the decoder reads: the checked sampling fields, and messages, system and tools read field by field. */
export type MessagesPromptSource = Partial<Pick<MessagesBody, 'model' | 'max_tokens' | 'temperature' | 'stream'>> & {
  messages: { role: unknown; content?: unknown }[]
  system?: unknown
  tools?: unknown
  tool_choice?: unknown
  top_p?: unknown
  stop_sequences?: unknown
}

/**
 * A messages-format request (https://docs.claude.com/en/api/messages) as the canonical prompt,
 * for routes that do not speak it natively. Client tools, tool_use / tool_result turns, images
 * and thinking are kept; provider-hosted tools (web search, code execution, ...) and their
 * blocks run only on native routes and are left out here (docs/api.md#messages).
 */
export function decodeMessagesRequest(body: MessagesPromptSource): Prompt {
  return {
    system: systemText(body.system),
    messages: body.messages.flatMap((message, index) => decodeMessage(message, `messages[${index}]`)),
    tools: clientTools(body.tools),
    toolChoice: toolChoice(body.tool_choice),
    maxOutputTokens: typeof body.max_tokens === 'number' ? body.max_tokens : undefined,
    temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
    topP: typeof body.top_p === 'number' ? body.top_p : undefined,
    stopSequences: Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((stop): stop is string => typeof stop === 'string') : undefined,
    stream: body.stream === true,
  }
}

function systemText(system: unknown): string | undefined {
  if (typeof system === 'string') return system || undefined
  if (!Array.isArray(system)) return undefined
  const text = objectsIn(system)
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('\n\n')
  return text || undefined
}

/** A message's content blocks as the client sent them, still unread: a string is one text block. */
function blocksOf(content: unknown): ClientObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return objectsIn(content)
}

function decodeMessage(message: { role: unknown; content?: unknown }, param: string): Message[] {
  const blocks = blocksOf(message.content)
  if (message.role === 'assistant') {
    const content = blocks.flatMap((block, index) => assistantBlockIn(block, `${param}.content[${index}]`) ?? []).map(assistantPartOf)
    return content.length > 0 ? [{ role: 'assistant', content }] : []
  }
  // A user turn: tool results answer the previous assistant turn, so they come first.
  const results = blocks.flatMap((block, index) => toolResultIn(block, `${param}.content[${index}]`) ?? []).map(toolResultPartOf)
  const user = blocks.flatMap((block) => userBlockIn(block) ?? []).map(userPartOf)
  return [...(results.length > 0 ? [{ role: 'tool' as const, content: results }] : []), ...(user.length > 0 ? [{ role: 'user' as const, content: user }] : [])]
}

/** A client's assistant block that has a canonical form; a tool_use without its id or name is the client's error. */
function assistantBlockIn(block: ClientObject, at: string): AssistantBlock | undefined {
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text }
  if (block.type === 'tool_use')
    return { type: 'tool_use', id: requireString(block.id, `${at}.id`), name: requireString(block.name, `${at}.name`), input: block.input }
  if (block.type === 'thinking' && typeof block.thinking === 'string') {
    return { type: 'thinking', thinking: block.thinking, ...(typeof block.signature === 'string' ? { signature: block.signature } : {}) }
  }
  return undefined
}

function toolResultIn(block: ClientObject, at: string): ToolResultBlockParam | undefined {
  if (block.type !== 'tool_result') return undefined
  return {
    type: 'tool_result',
    tool_use_id: requireString(block.tool_use_id, `${at}.tool_use_id`),
    content: typeof block.content === 'string' ? block.content : blocksOf(block.content).flatMap((part) => userBlockIn(part) ?? []),
    ...(block.is_error === true ? { is_error: true as const } : {}),
  }
}

function userBlockIn(block: ClientObject): UserBlockParam | undefined {
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text }
  if (block.type === 'image' && isRecord(block.source)) {
    const source = block.source
    if (source.type === 'base64' && typeof source.data === 'string') {
      return {
        type: 'image',
        source: { type: 'base64', data: source.data, media_type: typeof source.media_type === 'string' ? source.media_type : 'image/png' },
      }
    }
    if (source.type === 'url' && typeof source.url === 'string') return { type: 'image', source: { type: 'url', url: source.url } }
  }
  return undefined
}

function clientTools(tools: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(tools)) return undefined
  // Client tools have an input_schema; provider-hosted ones have a versioned type instead.
  return objectsIn(tools).flatMap((tool, index): ToolDefinition[] => {
    if (!isRecord(tool.input_schema) || (tool.type !== undefined && tool.type !== 'custom')) return []
    return [
      {
        name: requireString(tool.name, `tools[${index}].name`),
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        inputSchema: tool.input_schema,
      },
    ]
  })
}

function toolChoice(choice: unknown): ToolChoice | undefined {
  if (!isRecord(choice)) return undefined
  const { type, name } = choice
  if (type === 'auto') return { type: 'auto' }
  if (type === 'none') return { type: 'none' }
  if (type === 'any') return { type: 'required' }
  if (type === 'tool' && typeof name === 'string') return { type: 'tool', name }
  return undefined
}
