import type { ImagePart, Message, Prompt, TextPart, ToolChoice } from '../../canonical/prompt'
import { chatToolCallOf } from '../../wire/chat-completions/content'
import type { ChatMessage, ChatRequest, ChatToolChoice, ChatUserPart } from '../../wire/chat-completions/request'
import { imageUrlOf } from '../../wire/data-url'
import type { ChatOutputLimitField } from './output-limit'

/**
 * The canonical prompt as an OpenAI chat completions body
 * (https://platform.openai.com/docs/api-reference/chat/create). Reasoning from earlier turns
 * has no place in this format and is left out; usage is always asked for when streaming. The
 * output limit goes in `limitField`, the field the server reads (output-limit.ts).
 */
export function convertPromptToChat(prompt: Prompt, limitField: ChatOutputLimitField): ChatRequest {
  const messages: ChatMessage[] = []
  if (prompt.system) messages.push({ role: 'system', content: prompt.system })
  for (const message of prompt.messages) messages.push(...convertMessage(message))
  return {
    messages,
    ...(prompt.tools && prompt.tools.length > 0
      ? {
          tools: prompt.tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.inputSchema },
          })),
        }
      : {}),
    ...(prompt.toolChoice ? { tool_choice: toolChoice(prompt.toolChoice) } : {}),
    ...(prompt.maxOutputTokens !== undefined ? { [limitField]: prompt.maxOutputTokens } : {}),
    ...(prompt.temperature !== undefined ? { temperature: prompt.temperature } : {}),
    ...(prompt.topP !== undefined ? { top_p: prompt.topP } : {}),
    ...(prompt.stopSequences && prompt.stopSequences.length > 0 ? { stop: prompt.stopSequences } : {}),
    ...(prompt.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }
}

function toolChoice(choice: ToolChoice): ChatToolChoice {
  return choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type
}

function convertMessage(message: Message): ChatMessage[] {
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: userContent(message.content) }]
    case 'assistant': {
      const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
      const calls = message.content.flatMap((part) => (part.type === 'tool-call' ? [chatToolCallOf(part)] : []))
      return [{ role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }]
    }
    case 'tool':
      return message.content.map((result) => ({
        role: 'tool',
        tool_call_id: result.toolCallId,
        content: typeof result.content === 'string' ? result.content : result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n'),
      }))
  }
}

function userContent(parts: (TextPart | ImagePart)[]): string | ChatUserPart[] {
  const texts = parts.flatMap((part) => (part.type === 'text' ? [part.text] : []))
  if (texts.length === parts.length) return texts.join('\n')
  return parts.map(
    (part): ChatUserPart => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: imageUrlOf(part) } }),
  )
}
