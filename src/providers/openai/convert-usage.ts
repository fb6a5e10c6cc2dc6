import { reportedCount, type Usage } from '../../spec/usage'
import type { ChatUsage } from './api'

/**
 * OpenAI counts cached and cache-written tokens inside prompt_tokens; the canonical usage
 * keeps them apart so each is priced once (CONTRACT.md §7).
 */
export function convertChatUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const usage = raw as ChatUsage
  if (typeof usage.prompt_tokens !== 'number' && typeof usage.completion_tokens !== 'number') return undefined
  const prompt = reportedCount(usage.prompt_tokens)
  const cacheRead = Math.min(reportedCount(usage.prompt_tokens_details?.cached_tokens), prompt)
  const cacheWrite = Math.min(reportedCount(usage.prompt_tokens_details?.cache_write_tokens), prompt - cacheRead)
  return {
    inputTokens: prompt - cacheRead - cacheWrite,
    outputTokens: reportedCount(usage.completion_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    webSearchRequests: 0,
  }
}

/** The Responses API's usage (input_tokens with input_tokens_details.cached_tokens, output_tokens). */
export function convertResponsesUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const usage = raw as { input_tokens?: number; output_tokens?: number; input_tokens_details?: { cached_tokens?: number } | null }
  if (typeof usage.input_tokens !== 'number') return undefined
  const cached = Math.min(reportedCount(usage.input_tokens_details?.cached_tokens), usage.input_tokens)
  return { inputTokens: usage.input_tokens - cached, outputTokens: reportedCount(usage.output_tokens), cacheReadTokens: cached, cacheWriteTokens: 0, webSearchRequests: 0 }
}
