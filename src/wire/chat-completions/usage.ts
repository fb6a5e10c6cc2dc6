import { type Static, Type } from '@sinclair/typebox'
import { allInputTokens, reportedCount, type Usage, usageOf } from '../../canonical/usage'
import { decodeWire, WireCount } from '../decode'

/**
 * A chat completions `usage` object (https://platform.openai.com/docs/api-reference/chat/object)
 * and its canonical reading, both ways. OpenAI counts cached and cache-written tokens inside
 * prompt_tokens; the canonical usage keeps them apart so each is priced once.
 */
export const ChatUsage = Type.Object({
  prompt_tokens: WireCount,
  completion_tokens: WireCount,
  total_tokens: WireCount,
  prompt_tokens_details: Type.Optional(Type.Union([Type.Object({ cached_tokens: WireCount, cache_write_tokens: WireCount }), Type.Null()])),
  completion_tokens_details: Type.Optional(Type.Union([Type.Object({ reasoning_tokens: WireCount }), Type.Null()])),
})
export type ChatUsage = Static<typeof ChatUsage>

/** The usage shown to a client when a call is settled: the counts and what the call cost. */
export interface ChatUsageShown {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number }
  cost: number
}

/** Whether a count is there at all: absent and null are not reported, anything else is (billing judges it). */
const reported = (count: unknown) => count !== undefined && count !== null

/**
 * An upstream's usage object as canonical usage. Undefined when no usage is reported (some
 * compatible servers send none, and streams send `usage: null` until the last chunk).
 */
export function usageFromChat(raw: unknown): Usage | undefined {
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

/** Canonical usage as a client reads it: cached input counted inside prompt_tokens and shown in its details. */
export function chatUsageOf(usage: Usage, cost: number): ChatUsageShown {
  const prompt = allInputTokens(usage)
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.outputTokens,
    total_tokens: prompt + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadTokens },
    cost,
  }
}
