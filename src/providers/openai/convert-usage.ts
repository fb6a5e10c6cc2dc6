import { reportedCount, type Usage, usageOf } from '../../canonical/usage'
import { decodeWire } from '../../wire/decode'
import { ChatUsage, ResponsesUsage } from './api'

/** Whether a count is there at all: absent and null are not reported, anything else is (billing judges it). */
const reported = (count: unknown) => count !== undefined && count !== null

/**
 * OpenAI counts cached and cache-written tokens inside prompt_tokens; the canonical usage
 * keeps them apart so each is priced once. Undefined when no usage is reported (some
 * compatible servers send none, and streams send `usage: null` until the last chunk).
 */
export function convertChatUsage(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return undefined
  const usage = decodeWire(ChatUsage, raw, 'chat usage')
  if (!reported(usage.prompt_tokens) && !reported(usage.completion_tokens)) return undefined
  const prompt = reportedCount(usage.prompt_tokens)
  const cacheRead = Math.min(reportedCount(usage.prompt_tokens_details?.cached_tokens), prompt)
  const cacheWrite = Math.min(reportedCount(usage.prompt_tokens_details?.cache_write_tokens), prompt - cacheRead)
  return usageOf({
    inputTokens: prompt - cacheRead - cacheWrite,
    outputTokens: reportedCount(usage.completion_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  })
}

/** The Responses API's usage (input_tokens with input_tokens_details.cached_tokens, output_tokens). */
export function convertResponsesUsage(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return undefined
  const usage = decodeWire(ResponsesUsage, raw, 'Responses usage')
  if (!reported(usage.input_tokens) && !reported(usage.output_tokens)) return undefined
  const input = reportedCount(usage.input_tokens)
  const cached = Math.min(reportedCount(usage.input_tokens_details?.cached_tokens), input)
  return usageOf({ inputTokens: input - cached, outputTokens: reportedCount(usage.output_tokens), cacheReadTokens: cached })
}
