import type { Usage } from '../../spec/usage'
import type { UsageMetadata } from './api'

/** Gemini counts cached tokens inside the prompt and thinking apart from the answer: both are output here. */
export function convertGeminiUsage(usage: UsageMetadata | undefined): Usage | undefined {
  if (!usage || (usage.promptTokenCount === undefined && usage.candidatesTokenCount === undefined)) return undefined
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0)
  const cached = Math.min(usage.cachedContentTokenCount ?? 0, prompt)
  return {
    inputTokens: prompt - cached,
    outputTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    webSearchRequests: 0,
  }
}
