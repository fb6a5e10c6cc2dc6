import type { ImagePart, Message, Prompt, ReasoningPart, TextPart, ToolCallPart, ToolChoice, ToolDefinition, ToolResultPart } from '../../canonical/prompt'
import { objectsIn, requireString } from '../../http/json-fields'
import { isRecord } from '../../util/is-record'
import type { MessagesBody } from './schema'

type Block = Record<string, unknown>

/** What the decoder reads: the checked sampling fields, and messages, system and tools read field by field. */
export type MessagesPromptSource = Partial<Pick<MessagesBody, 'model' | 'max_tokens' | 'temperature' | 'stream'>> & {
  messages: Block[]
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

function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return objectsIn(content)
}

function decodeMessage(message: Block, param: string): Message[] {
  const blocks = blocksOf(message.content)
  if (message.role === 'assistant') {
    const content = blocks.flatMap((block, index): (TextPart | ToolCallPart | ReasoningPart)[] => {
      if (block.type === 'text' && typeof block.text === 'string') return [{ type: 'text', text: block.text }]
      if (block.type === 'tool_use') {
        const at = `${param}.content[${index}]`
        return [{ type: 'tool-call', id: requireString(block.id, `${at}.id`), name: requireString(block.name, `${at}.name`), input: block.input ?? {} }]
      }
      if (block.type === 'thinking' && typeof block.thinking === 'string') {
        return [{ type: 'reasoning', text: block.thinking, ...(typeof block.signature === 'string' ? { signature: block.signature } : {}) }]
      }
      return []
    })
    return content.length > 0 ? [{ role: 'assistant', content }] : []
  }
  // A user turn: tool results answer the previous assistant turn, so they come first.
  const results = blocks.flatMap((block, index): ToolResultPart[] =>
    block.type === 'tool_result'
      ? [
          {
            type: 'tool-result',
            toolCallId: requireString(block.tool_use_id, `${param}.content[${index}].tool_use_id`),
            content: resultContent(block.content),
            ...(block.is_error === true ? { isError: true } : {}),
          },
        ]
      : [],
  )
  const user = blocks.flatMap((block): (TextPart | ImagePart)[] => userPart(block))
  return [...(results.length > 0 ? [{ role: 'tool' as const, content: results }] : []), ...(user.length > 0 ? [{ role: 'user' as const, content: user }] : [])]
}

function userPart(block: Block): (TextPart | ImagePart)[] {
  if (block.type === 'text' && typeof block.text === 'string') return [{ type: 'text', text: block.text }]
  if (block.type === 'image' && isRecord(block.source)) {
    const source = block.source
    if (source.type === 'base64' && typeof source.data === 'string') {
      return [{ type: 'image', data: source.data, mediaType: typeof source.media_type === 'string' ? source.media_type : 'image/png' }]
    }
    if (source.type === 'url' && typeof source.url === 'string') return [{ type: 'image', url: source.url }]
  }
  return []
}

function resultContent(content: unknown): string | (TextPart | ImagePart)[] {
  if (typeof content === 'string') return content
  return blocksOf(content).flatMap(userPart)
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
