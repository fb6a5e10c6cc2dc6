import { DEFAULT_MAX_OUTPUT_TOKENS, type ImagePart, type Message, type Prompt, type TextPart } from '../../canonical/prompt'
import type { ContentBlockParam, ImageBlockParam, MessageParam, MessagesRequest, TextBlockParam, ToolChoiceParam } from './api'

/**
 * The canonical prompt as an Anthropic messages body (https://docs.claude.com/en/api/messages).
 * Tool results become user turns of tool_result blocks, as the API requires.
 */
export function convertPromptToMessages(prompt: Prompt): MessagesRequest {
  return {
    ...(prompt.system ? { system: prompt.system } : {}),
    messages: prompt.messages.map(convertMessage),
    // Required by the API. The dispatcher fills in the model's maximum when the client named no
    // number; only a model without a configured maximum gets the default the hold assumed.
    max_tokens: prompt.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    ...(prompt.tools && prompt.tools.length > 0
      ? {
          tools: prompt.tools.map((tool) => ({
            name: tool.name,
            ...(tool.description ? { description: tool.description } : {}),
            input_schema: tool.inputSchema,
          })),
        }
      : {}),
    ...(prompt.toolChoice ? { tool_choice: toolChoice(prompt.toolChoice) } : {}),
    ...(prompt.temperature !== undefined ? { temperature: Math.min(prompt.temperature, 1) } : {}),
    ...(prompt.topP !== undefined ? { top_p: prompt.topP } : {}),
    ...(prompt.stopSequences && prompt.stopSequences.length > 0 ? { stop_sequences: prompt.stopSequences } : {}),
    ...(prompt.stream ? { stream: true } : {}),
  }
}

function convertMessage(message: Message): MessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content.map(contentBlock) }
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content.map((part): ContentBlockParam => {
          if (part.type === 'text') return { type: 'text', text: part.text }
          if (part.type === 'reasoning') return { type: 'thinking', thinking: part.text, signature: part.signature ?? '' }
          return { type: 'tool_use', id: part.id, name: part.name, input: part.input ?? {} }
        }),
      }
    case 'tool':
      return {
        role: 'user',
        content: message.content.map((result) => ({
          type: 'tool_result',
          tool_use_id: result.toolCallId,
          content: typeof result.content === 'string' ? result.content : result.content.map(contentBlock),
          ...(result.isError ? { is_error: true as const } : {}),
        })),
      }
  }
}

function contentBlock(part: TextPart | ImagePart): TextBlockParam | ImageBlockParam {
  if (part.type === 'text') return { type: 'text', text: part.text }
  return part.url
    ? { type: 'image', source: { type: 'url', url: part.url } }
    : { type: 'image', source: { type: 'base64', media_type: part.mediaType ?? 'image/png', data: part.data ?? '' } }
}

function toolChoice(choice: NonNullable<Prompt['toolChoice']>): ToolChoiceParam {
  if (choice.type === 'required') return { type: 'any' }
  if (choice.type === 'tool') return { type: 'tool', name: choice.name }
  return { type: choice.type }
}
