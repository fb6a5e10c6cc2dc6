import type { ImagePart, Message, Prompt, TextPart } from '../../canonical/prompt'
import type { Content, FunctionCallingConfig, GenerateContentRequest, Part } from './api'

/**
 * The canonical prompt as a generateContent body (https://ai.google.dev/api/generate-content).
 * Gemini answers a function by its name, not a call id, so each tool result is matched to the
 * call it answers.
 */
export function convertPromptToGemini(prompt: Prompt): GenerateContentRequest {
  const names = new Map<string, string>()
  for (const message of prompt.messages) {
    if (message.role === 'assistant') for (const part of message.content) if (part.type === 'tool-call') names.set(part.id, part.name)
  }
  const generationConfig = {
    ...(prompt.temperature !== undefined ? { temperature: prompt.temperature } : {}),
    ...(prompt.topP !== undefined ? { topP: prompt.topP } : {}),
    ...(prompt.maxOutputTokens !== undefined ? { maxOutputTokens: prompt.maxOutputTokens } : {}),
    ...(prompt.stopSequences && prompt.stopSequences.length > 0 ? { stopSequences: prompt.stopSequences } : {}),
  }
  return {
    contents: prompt.messages.map((message) => convertMessage(message, names)),
    ...(prompt.system ? { systemInstruction: { role: 'user', parts: [{ text: prompt.system }] } } : {}),
    ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
    ...(prompt.tools && prompt.tools.length > 0
      ? {
          tools: [
            {
              functionDeclarations: prompt.tools.map((tool) => ({
                name: tool.name,
                ...(tool.description ? { description: tool.description } : {}),
                parameters: tool.inputSchema,
              })),
            },
          ],
        }
      : {}),
    ...(prompt.toolChoice ? { toolConfig: { functionCallingConfig: functionCalling(prompt.toolChoice) } } : {}),
  }
}

function convertMessage(message: Message, names: Map<string, string>): Content {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: message.content.map(part) }
    case 'assistant':
      return {
        role: 'model',
        parts: message.content.flatMap((item): Part[] => {
          if (item.type === 'text') return [{ text: item.text }]
          if (item.type === 'tool-call') return [{ functionCall: { name: item.name, args: item.input ?? {} } }]
          return []
        }),
      }
    case 'tool':
      return {
        role: 'user',
        parts: message.content.map((result) => ({
          functionResponse: {
            name: names.get(result.toolCallId) ?? result.toolCallId,
            response: {
              content:
                typeof result.content === 'string' ? result.content : result.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n'),
            },
          },
        })),
      }
  }
}

function part(item: TextPart | ImagePart): Part {
  if (item.type === 'text') return { text: item.text }
  return item.url
    ? { fileData: { fileUri: item.url, mimeType: item.mediaType ?? 'image/png' } }
    : { inlineData: { mimeType: item.mediaType ?? 'image/png', data: item.data ?? '' } }
}

function functionCalling(choice: NonNullable<Prompt['toolChoice']>): FunctionCallingConfig {
  if (choice.type === 'none') return { mode: 'NONE' }
  if (choice.type === 'required') return { mode: 'ANY' }
  if (choice.type === 'tool') return { mode: 'ANY', allowedFunctionNames: [choice.name] }
  return { mode: 'AUTO' }
}
