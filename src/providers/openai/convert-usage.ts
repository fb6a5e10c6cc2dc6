import type { Usage } from '../../spec/usage'
import type { ChatUsage } from './api'

/**
 * OpenAI counts cached and cache-written tokens inside prompt_tokens; the canonical usage
 * keeps them apart so each is priced once (CONTRACT.md §7).
 */
export function convertChatUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const usage = raw as ChatUsage
  if (typeof usage.prompt_tokens !== 'number' && typeof usage.completion_tokens !== 'number') return undefined
  const prompt = usage.prompt_tokens ?? 0
  const cacheRead = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, prompt)
  const cacheWrite = Math.min(usage.prompt_tokens_details?.cache_write_tokens ?? 0, prompt - cacheRead)
  return {
    inputTokens: prompt - cacheRead - cacheWrite,
    outputTokens: usage.completion_tokens ?? 0,
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
  const cached = Math.min(usage.input_tokens_details?.cached_tokens ?? 0, usage.input_tokens)
  return { inputTokens: usage.input_tokens - cached, outputTokens: usage.output_tokens ?? 0, cacheReadTokens: cached, cacheWriteTokens: 0, webSearchRequests: 0 }
}
