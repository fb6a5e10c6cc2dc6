import { reportedCount, type Usage } from '../../canonical/usage'
import { decodeWire } from '../decode'
import { MessagesUsage } from './api'

/** Whether a count is there at all: absent and null are not reported, anything else is (billing judges it). */
const reported = (count: unknown) => count !== undefined && count !== null

/**
 * Anthropic reports input apart from cache reads and writes already; web searches made by the
 * server tool come in `server_tool_use` (https://docs.claude.com/en/api/messages).
 */
export function convertMessagesUsage(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return undefined
  const usage = decodeWire(MessagesUsage, raw, 'messages usage')
  if (!reported(usage.input_tokens) && !reported(usage.output_tokens)) return undefined
  return {
    inputTokens: reportedCount(usage.input_tokens),
    outputTokens: reportedCount(usage.output_tokens),
    cacheReadTokens: reportedCount(usage.cache_read_input_tokens),
    cacheWriteTokens: reportedCount(usage.cache_creation_input_tokens),
    webSearchRequests: reportedCount(usage.server_tool_use?.web_search_requests),
  }
}
