import { type Static, Type } from '@sinclair/typebox'
import { allInputTokens, reportedCount, type Usage, usageOf } from '../../canonical/usage'
import { decodeWire, WireCount } from '../decode'

/**
 * A Responses API `usage` object (https://platform.openai.com/docs/api-reference/responses/object)
 * and its canonical reading, both ways: cached input is counted inside input_tokens and shown
 * in input_tokens_details.
 */
export const ResponsesUsage = Type.Object({
  input_tokens: WireCount,
  output_tokens: WireCount,
  input_tokens_details: Type.Optional(Type.Union([Type.Object({ cached_tokens: WireCount }), Type.Null()])),
})
export type ResponsesUsage = Static<typeof ResponsesUsage>

/** The usage shown to a client when a call is settled: the counts and what the call cost. */
export interface ResponsesUsageShown {
  input_tokens: number
  input_tokens_details: { cached_tokens: number }
  output_tokens: number
  output_tokens_details: { reasoning_tokens: number }
  total_tokens: number
  cost: number
}

/** Whether a count is there at all: absent and null are not reported, anything else is (billing judges it). */
const reported = (count: unknown) => count !== undefined && count !== null

/** An upstream's usage object as canonical usage; undefined when it reports neither input nor output. */
export function usageFromResponses(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return undefined
  const usage = decodeWire(ResponsesUsage, raw, 'Responses usage')
  if (!reported(usage.input_tokens) && !reported(usage.output_tokens)) return undefined
  const input = reportedCount(usage.input_tokens)
  const cached = Math.min(reportedCount(usage.input_tokens_details?.cached_tokens), input)
  return usageOf({ inputTokens: input - cached, outputTokens: reportedCount(usage.output_tokens), cacheReadTokens: cached })
}

export function responsesUsageOf(usage: Usage, cost: number): ResponsesUsageShown {
  const input = allInputTokens(usage)
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.outputTokens,
    cost,
  }
}
