import type { Answer, FinishReason } from '../../canonical/answer'
import { randomToken } from '../../util/ids'
import { outputItemOf } from '../../wire/responses/content'
import type { OutputItem, ResponseObject, ResponseStatus } from '../../wire/responses/response'
import { type ResponsesUsageShown, responsesUsageOf } from '../../wire/responses/usage'

/** Ids in the Responses API's own style: the answer does not reveal which route served it. */
export const responseIds = {
  response: () => `resp_${randomToken(24)}`,
  message: () => `msg_${randomToken(24)}`,
  functionCall: () => `fc_${randomToken(24)}`,
  reasoning: () => `rs_${randomToken(24)}`,
}

/** The response object (docs/upstreams.md#openai-responses-api) around output items; `status` and details follow the finish reason. */
export function responseObject(fields: {
  id: string
  model: string
  createdAt: number
  output: OutputItem[]
  finishReason?: FinishReason
  usage?: ResponsesUsageShown
  status?: ResponseStatus
}): ResponseObject {
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
export function encodeResponse(answer: Answer, model: string, cost: number): ResponseObject {
  const output: OutputItem[] = []
  let text = ''
  const flushText = () => {
    if (text) output.push(outputItemOf({ type: 'text', text }, responseIds.message()))
    text = ''
  }
  for (const part of answer.content) {
    if (part.type === 'text') {
      text += part.text
      continue
    }
    flushText()
    output.push(outputItemOf(part, part.type === 'tool-call' ? responseIds.functionCall() : responseIds.reasoning()))
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
