import { reportedCount, type Usage } from '../../spec/usage'
import type { MessagesUsage } from './api'

/**
 * Anthropic reports input apart from cache reads and writes already; web searches made by the
 * server tool come in `server_tool_use` (https://docs.claude.com/en/api/messages).
 */
export function convertMessagesUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const usage = raw as MessagesUsage
  if (typeof usage.input_tokens !== 'number' && typeof usage.output_tokens !== 'number') return undefined
  return {
    inputTokens: reportedCount(usage.input_tokens),
    outputTokens: reportedCount(usage.output_tokens),
    cacheReadTokens: reportedCount(usage.cache_read_input_tokens),
    cacheWriteTokens: reportedCount(usage.cache_creation_input_tokens),
    webSearchRequests: reportedCount(usage.server_tool_use?.web_search_requests),
  }
}
