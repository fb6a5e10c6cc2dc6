import { type Static, Type } from '@sinclair/typebox'
import type { ChatToolCall } from './request'
import { ChatUsage, type ChatUsageShown } from './usage'

/**
 * A chat completion (https://platform.openai.com/docs/api-reference/chat/object): a schema for
 * what an upstream sends, checked before it is read, and the type the gateway writes to a
 * client. Only the fields used are named; everything else an upstream sends passes.
 */

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]))

/** `reasoning_content` is not OpenAI's: DeepSeek and other compatible servers send their reasoning there. */
const ChatAssistantMessage = Type.Object({
  content: NullableString,
  reasoning_content: NullableString,
  tool_calls: Type.Optional(
    Type.Union([Type.Array(Type.Object({ id: Type.String(), function: Type.Object({ name: Type.String(), arguments: Type.String() }) })), Type.Null()]),
  ),
})

export const ChatCompletion = Type.Object({
  id: Type.Optional(Type.String()),
  choices: Type.Array(Type.Object({ message: ChatAssistantMessage, finish_reason: NullableString }), { minItems: 1 }),
  usage: Type.Optional(Type.Union([ChatUsage, Type.Null()])),
})
export type ChatCompletion = Static<typeof ChatCompletion>

/** A chat.completion object as the gateway writes it to a client: one choice, its usage carrying the cost. */
export interface ChatCompletionObject {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  choices: [
    {
      index: 0
      message: { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ChatToolCall[]; refusal: null }
      logprobs: null
      finish_reason: string
    },
  ]
  usage: ChatUsageShown
}
