import { type Static, Type } from '@sinclair/typebox'
import { reportedCount, type Usage } from '../../canonical/usage'
import { decodeWire, WireCount } from '../decode'

/**
 * A messages `usage` object (https://docs.claude.com/en/api/messages) and its canonical
 * reading, both ways. Anthropic reports input apart from cache reads and writes already; web
 * searches made by the server tool come in `server_tool_use`. Cache writes come as one total,
 * `cache_creation_input_tokens`, and split by lifetime in `cache_creation`
 * (https://docs.claude.com/en/docs/build-with-claude/prompt-caching#1-hour-cache-duration).
 */
export const MessagesUsage = Type.Object({
  input_tokens: WireCount,
  output_tokens: WireCount,
  cache_creation_input_tokens: WireCount,
  cache_read_input_tokens: WireCount,
  cache_creation: Type.Optional(Type.Union([Type.Object({ ephemeral_5m_input_tokens: WireCount, ephemeral_1h_input_tokens: WireCount }), Type.Null()])),
  server_tool_use: Type.Optional(Type.Union([Type.Object({ web_search_requests: WireCount }), Type.Null()])),
})
export type MessagesUsage = Static<typeof MessagesUsage>

/** The counts the gateway shows a client. */
export interface MessagesUsageCounts {
  input_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  output_tokens: number
}

/** The usage shown when a call is settled: the counts and what the call cost. */
export type MessagesUsageShown = MessagesUsageCounts & { cost: number }

const USAGE_FIELDS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'cache_creation', 'server_tool_use'] as const

/**
 * A stream's usage so far, updated by an event's `usage`: message_start's counts, then each
 * message_delta's (cumulative: a figure it reports replaces the earlier one, one it leaves out
 * or sends as null keeps it). Read unchecked, like the stream; usageFromMessages checks it.
 */
export function updateStreamUsage(soFar: MessagesUsage, reported: unknown): void {
  if (typeof reported !== 'object' || reported === null) return
  const update: MessagesUsage = reported
  for (const field of USAGE_FIELDS) if (update[field] !== undefined && update[field] !== null) soFar[field] = update[field]
}

/** Whether a count is there at all: absent and null are not reported, anything else is (billing judges it). */
const reported = (count: unknown) => count !== undefined && count !== null

/** An upstream's usage object as canonical usage; undefined when it reports neither input nor output. */
export function usageFromMessages(raw: unknown): Usage | undefined {
  if (raw === undefined || raw === null) return undefined
  const usage = decodeWire(MessagesUsage, raw, 'messages usage')
  if (!reported(usage.input_tokens) && !reported(usage.output_tokens)) return undefined
  const cacheWrites = reportedCount(usage.cache_creation_input_tokens)
  // The total is what was written; the split only says how much of it was kept for an hour.
  // Without a split (older API versions, compatible servers) every write is a five-minute one.
  const oneHour = Math.min(reportedCount(usage.cache_creation?.ephemeral_1h_input_tokens), cacheWrites)
  return {
    inputTokens: reportedCount(usage.input_tokens),
    outputTokens: reportedCount(usage.output_tokens),
    cacheReadTokens: reportedCount(usage.cache_read_input_tokens),
    cacheWriteTokens: cacheWrites - oneHour,
    cacheWrite1hTokens: oneHour,
    webSearchRequests: reportedCount(usage.server_tool_use?.web_search_requests),
  }
}

/** Canonical usage in the messages format's counts. */
export function messagesUsageOf(usage: Usage): MessagesUsageCounts {
  return {
    input_tokens: usage.inputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens + usage.cacheWrite1hTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    output_tokens: usage.outputTokens,
  }
}
