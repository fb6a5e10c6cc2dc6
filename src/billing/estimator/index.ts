import { isRecord } from '../../util/is-record'
import { estimateTextTokens } from './text'

export { estimateTextTokens }

/** Per message: role and framing tokens the chat formats add around content. */
const MESSAGE_OVERHEAD = 4
/** A picture costs about this many input tokens at high detail on the major providers. */
const IMAGE_TOKENS = 1_600

/**
 * Tokens of any JSON value: strings and numbers by their text, images by a fixed allowance,
 * structure by its keys. Recursive: request bodies are at most 128 levels deep (http/json-body.ts).
 */
export function estimateValueTokens(value: unknown): number {
  if (typeof value === 'string') return estimateTextTokens(value)
  // A number costs what its text costs (digits go by threes); a boolean is one word.
  if (typeof value === 'number') return estimateTextTokens(String(value))
  if (typeof value === 'boolean') return 1
  if (Array.isArray(value)) return value.reduce((total: number, item) => total + estimateValueTokens(item), 0)
  if (isRecord(value)) {
    const record = value
    if (record.type === 'image_url' || record.type === 'image' || record.type === 'input_image') return IMAGE_TOKENS
    return Object.entries(record).reduce((total, [key, item]) => total + estimateTextTokens(key) + estimateValueTokens(item), 0)
  }
  return 0
}

/** Input tokens of a chat-shaped request: its messages (or system + messages) and its tool definitions. */
export function estimateChatInputTokens(request: { messages?: unknown; system?: unknown; tools?: unknown }): number {
  const messages = Array.isArray(request.messages) ? request.messages : []
  let tokens = 3 + messages.length * MESSAGE_OVERHEAD
  for (const message of messages) {
    if (isRecord(message)) {
      const { role: _role, ...rest } = message
      tokens += estimateValueTokens(rest)
    }
  }
  if (request.system !== undefined) tokens += MESSAGE_OVERHEAD + estimateValueTokens(request.system)
  if (request.tools !== undefined) tokens += estimateValueTokens(request.tools)
  return tokens
}
