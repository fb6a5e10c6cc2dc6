import type { Answer, FinishReason } from '../../canonical/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../canonical/prompt'
import type { Usage } from '../../canonical/usage'
import { randomToken } from '../../util/ids'

/** Ids in the Responses API's own style: the answer does not reveal which route served it. */
export const responseIds = {
  response: () => `resp_${randomToken(24)}`,
  message: () => `msg_${randomToken(24)}`,
  functionCall: () => `fc_${randomToken(24)}`,
  reasoning: () => `rs_${randomToken(24)}`,
}

export function responsesUsageOf(usage: Usage, cost: number): Record<string, unknown> {
  const input = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.outputTokens,
    cost,
  }
}

export function outputItem(part: TextPart | ReasoningPart | ToolCallPart | { type: 'text'; text: string }, id: string): Record<string, unknown> {
  if (part.type === 'reasoning') return { type: 'reasoning', id, summary: [], content: [{ type: 'reasoning_text', text: part.text }] }
  if (part.type === 'tool-call')
    return { type: 'function_call', id, call_id: part.id, name: part.name, arguments: JSON.stringify(part.input ?? {}), status: 'completed' }
  return { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: part.text, annotations: [], logprobs: [] }] }
}

/** The response object (docs/upstreams.md#openai-responses-api) around output items; `status` and details follow the finish reason. */
export function responseObject(fields: {
  id: string
  model: string
  createdAt: number
  output: unknown[]
  finishReason?: FinishReason
  usage?: Record<string, unknown>
  status?: string
}) {
  const incomplete = fields.finishReason === 'length' || fields.finishReason === 'content-filter'
  return {
    id: fields.id,
    object: 'response',
    created_at: fields.createdAt,
    status: fields.status ?? (incomplete ? 'incomplete' : 'completed'),
    error: null,
    incomplete_details: incomplete ? { reason: fields.finishReason === 'length' ? 'max_output_tokens' : 'content_filter' } : null,
    instructions: null,
    model: fields.model,
    output: fields.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    store: false,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    truncation: 'disabled',
    usage: fields.usage ?? null,
    metadata: {},
  }
}

/** A canonical answer as a Responses API response object; consecutive text parts form one message item. */
export function encodeResponse(answer: Answer, model: string, cost: number): Record<string, unknown> {
  const output: unknown[] = []
  let text = ''
  const flushText = () => {
    if (text) output.push(outputItem({ type: 'text', text }, responseIds.message()))
    text = ''
  }
  for (const part of answer.content) {
    if (part.type === 'text') {
      text += part.text
      continue
    }
    flushText()
    output.push(outputItem(part, part.type === 'tool-call' ? responseIds.functionCall() : responseIds.reasoning()))
  }
  flushText()
  return responseObject({
    id: responseIds.response(),
    model,
    createdAt: Math.floor(Date.now() / 1000),
    output,
    finishReason: answer.finishReason,
    usage: responsesUsageOf(answer.usage, cost),
  })
}
