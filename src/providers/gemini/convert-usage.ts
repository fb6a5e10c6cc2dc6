import { reportedCount, type Usage } from '../../spec/usage'
import type { UsageMetadata } from './api'

/** Gemini counts cached tokens inside the prompt and thinking apart from the answer: both are output here. */
export function convertGeminiUsage(usage: UsageMetadata | undefined): Usage | undefined {
  if (!usage || (usage.promptTokenCount === undefined && usage.candidatesTokenCount === undefined)) return undefined
  const prompt = reportedCount(usage.promptTokenCount) + reportedCount(usage.toolUsePromptTokenCount)
  const cached = Math.min(reportedCount(usage.cachedContentTokenCount), prompt)
  return {
    inputTokens: prompt - cached,
    outputTokens: reportedCount(usage.candidatesTokenCount) + reportedCount(usage.thoughtsTokenCount),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    webSearchRequests: 0,
  }
}
