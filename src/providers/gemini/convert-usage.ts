import { reportedCount, type Usage, usageOf } from '../../canonical/usage'
import { decodeWire } from '../../wire/decode'
import { UsageMetadata } from './api'

/** Whether a count is there at all: absent and null are not reported, anything else is (billing judges it). */
const reported = (count: unknown) => count !== undefined && count !== null

/**
 * Gemini counts cached tokens inside the prompt and thinking apart from the answer: both are
 * output here. Undefined when no count is reported (Vertex's stream chunks before the last).
 */
export function convertGeminiUsage(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return undefined
  const usage = decodeWire(UsageMetadata, raw, 'usage metadata')
  if (!reported(usage.promptTokenCount) && !reported(usage.candidatesTokenCount)) return undefined
  const prompt = reportedCount(usage.promptTokenCount) + reportedCount(usage.toolUsePromptTokenCount)
  const cached = Math.min(reportedCount(usage.cachedContentTokenCount), prompt)
  return usageOf({
    inputTokens: prompt - cached,
    outputTokens: reportedCount(usage.candidatesTokenCount) + reportedCount(usage.thoughtsTokenCount),
    cacheReadTokens: cached,
  })
}
