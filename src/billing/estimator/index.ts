import { isRecord } from '../../util/is-record'
import { estimateTextTokens } from './text'

export { estimateTextTokens }

/** Per message: role and framing tokens the chat formats add around content. */
const MESSAGE_OVERHEAD = 4
/** A picture costs about this many input tokens at high detail on the major providers. */
const IMAGE_TOKENS = 1_600

/**
 * How many characters of one request the estimator reads one by one: about 130,000 tokens of
 * English, and at most about 17 ms of the event loop (33 ns a character on CJK, the dearest text
 * measured). Text past them is counted by its UTF-8 bytes (docs/billing.md#the-estimate).
 */
export const SCANNED_CHARACTERS_PER_REQUEST = 512 * 1024

/**
 * What is left of one request's scan: one per request, shared by every estimate of its parts,
 * so a request of many strings costs no more loop time than one of a single long one.
 */
export interface ScanBudget {
  characters: number
}

export function scanBudget(characters = SCANNED_CHARACTERS_PER_REQUEST): ScanBudget {
  return { characters }
}

/**
 * Tokens of a text within the request's scan budget: scanned while the budget holds it, else
 * its UTF-8 byte count, natively and at once. Every token of a byte-level tokenizer (o200k,
 * Claude's, SentencePiece with byte fallback) spans at least one byte, so that count is never
 * below the real one; it is one and a half to four times the scan's figure.
 */
export function boundedTextTokens(text: string, budget: ScanBudget): number {
  if (text.length > budget.characters) return Buffer.byteLength(text, 'utf8')
  budget.characters -= text.length
  return estimateTextTokens(text)
}

/**
 * Tokens of any JSON value: strings and numbers by their text, images by a fixed allowance,
 * structure by its keys. Recursive: request bodies are at most 128 levels deep (http/json-body.ts).
 */
export function estimateValueTokens(value: unknown, budget: ScanBudget = scanBudget()): number {
  if (typeof value === 'string') return boundedTextTokens(value, budget)
  // A number costs what its text costs (digits go by threes); a boolean is one word.
  if (typeof value === 'number') return estimateTextTokens(String(value))
  if (typeof value === 'boolean') return 1
  if (Array.isArray(value)) return value.reduce((total: number, item) => total + estimateValueTokens(item, budget), 0)
  if (isRecord(value)) {
    const record = value
    if (record.type === 'image_url' || record.type === 'image' || record.type === 'input_image') return IMAGE_TOKENS
    return Object.entries(record).reduce((total, [key, item]) => total + boundedTextTokens(key, budget) + estimateValueTokens(item, budget), 0)
  }
  return 0
}

/** Input tokens of a chat-shaped request: its messages (or system + messages) and its tool definitions. */
export function estimateChatInputTokens(request: { messages?: unknown; system?: unknown; tools?: unknown }, budget: ScanBudget = scanBudget()): number {
  const messages = Array.isArray(request.messages) ? request.messages : []
  let tokens = 3 + messages.length * MESSAGE_OVERHEAD
  for (const message of messages) {
    if (isRecord(message)) {
      const { role: _role, ...rest } = message
      tokens += estimateValueTokens(rest, budget)
    }
  }
  if (request.system !== undefined) tokens += MESSAGE_OVERHEAD + estimateValueTokens(request.system, budget)
  if (request.tools !== undefined) tokens += estimateValueTokens(request.tools, budget)
  return tokens
}
