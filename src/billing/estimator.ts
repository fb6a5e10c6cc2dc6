/**
 * The gateway's own token estimate: what holds are sized from, and what count_tokens answers.
 * It leans high on purpose (a hold that is too small lets a call cost more than was reserved)
 * while staying near real BPE tokenizers on prose and code, by counting runs of characters the
 * way they tend to merge:
 * - letters: one token per 6 characters of a run (most words are one token, long ones two);
 * - digits: one token per 3 (tokenizers split numbers in groups of three), and a space before
 *   a number is a token of its own;
 * - punctuation and symbols: one token per 2 (`();`, `=>`, `{}` usually merge);
 * - line breaks: one token per 2; other whitespace joins the next token;
 * - characters outside Latin script (CJK, emoji, ...): one token each.
 */
export function estimateTextTokens(text: string): number {
  let tokens = 0
  let kind = 0 // the run in progress: 0 none, 1 letters, 2 digits, 3 punctuation, 4 line breaks
  let run = 0
  let afterSpace = false
  const close = () => {
    if (run > 0) tokens += kind === 1 ? Math.ceil(run / 6) : kind === 2 ? Math.ceil(run / 3) : Math.ceil(run / 2)
    run = 0
  }
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    const next =
      (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || (code >= 0xc0 && code <= 0x24f)
        ? 1
        : code >= 48 && code <= 57
          ? 2
          : code === 10
            ? 4
            : code === 32 || code === 9 || code === 13
              ? 0
              : code < 0x80
                ? 3
                : -1
    if (next !== kind || next <= 0) close()
    if (next === 2 && run === 0 && afterSpace) tokens++
    afterSpace = next === 0
    if (next === -1) {
      // The second half of a surrogate pair was counted with the first.
      if (code < 0xdc00 || code > 0xdfff) tokens++
      kind = 0
      continue
    }
    kind = next
    if (next > 0) run++
  }
  close()
  return tokens
}

/** Per message: role and framing tokens the chat formats add around content. */
const MESSAGE_OVERHEAD = 4
/** A picture costs about this many input tokens at high detail on the major providers. */
const IMAGE_TOKENS = 1_600

/** Tokens of any JSON value: strings by their text, images by a fixed allowance, structure by its keys. */
export function estimateValueTokens(value: unknown): number {
  if (typeof value === 'string') return estimateTextTokens(value)
  if (typeof value === 'number' || typeof value === 'boolean') return 1
  if (Array.isArray(value)) return value.reduce((total: number, item) => total + estimateValueTokens(item), 0)
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>
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
    if (message && typeof message === 'object') {
      const { role: _role, ...rest } = message as Record<string, unknown>
      tokens += estimateValueTokens(rest)
    }
  }
  if (request.system !== undefined) tokens += MESSAGE_OVERHEAD + estimateValueTokens(request.system)
  if (request.tools !== undefined) tokens += estimateValueTokens(request.tools)
  return tokens
}
