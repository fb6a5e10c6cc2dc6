import type { Message } from './prompt'

/**
 * Tool arguments travel as JSON text in OpenAI's formats and as objects elsewhere. Text that
 * is not JSON is kept whole rather than lost.
 */
export function parseToolArguments(text: string): unknown {
  try {
    return text ? JSON.parse(text) : {}
  } catch {
    return { arguments: text }
  }
}

/**
 * Formats that spread one turn over several items (each tool result, each function call) are
 * merged: consecutive assistant parts form one turn, consecutive tool results answer it together.
 */
export function mergeTurns(messages: Message[]): Message[] {
  const merged: Message[] = []
  for (const message of messages) {
    const last = merged.at(-1)
    if (last?.role === 'assistant' && message.role === 'assistant') last.content.push(...message.content)
    else if (last?.role === 'tool' && message.role === 'tool') last.content.push(...message.content)
    else merged.push(message)
  }
  return merged
}
