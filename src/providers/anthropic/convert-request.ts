import { DEFAULT_MAX_OUTPUT_TOKENS, type Message, type Prompt } from '../../canonical/prompt'
import { assistantBlockOf, toolResultBlockOf, userBlockOf } from '../../wire/messages/content'
import type { MessageParam, MessagesRequest, ToolChoiceParam } from '../../wire/messages/request'

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
      return { role: 'user', content: message.content.map(userBlockOf) }
    case 'assistant':
      return { role: 'assistant', content: message.content.map(assistantBlockOf) }
    case 'tool':
      return { role: 'user', content: message.content.map(toolResultBlockOf) }
  }
}

function toolChoice(choice: NonNullable<Prompt['toolChoice']>): ToolChoiceParam {
  if (choice.type === 'required') return { type: 'any' }
  if (choice.type === 'tool') return { type: 'tool', name: choice.name }
  return { type: choice.type }
}
