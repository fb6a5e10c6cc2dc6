import { scrubCredentials } from '../util/scrub-credentials'

/**
 * Operational events (not request logs): one JSON line each on stderr. Callers pass short,
 * parameter-free fields; database errors go through describeDatabaseError first.
 */
export type EventLevel = 'debug' | 'info' | 'warn' | 'error'

/** A line longer than this is cut: one bad value must not flood the log. */
const MAX_LINE_LENGTH = 4096

/**
 * Writes one event. The line is scrubbed of anything shaped like a credential, in case a field
 * quoted one, and an oversized line keeps its head as text inside a line that still parses.
 */
export function logEvent(level: EventLevel, message: string, fields: Record<string, unknown> = {}): void {
  const time = new Date().toISOString()
  const line = scrubCredentials(JSON.stringify({ time, level, message, ...fields }, jsonSafe))
  if (line.length <= MAX_LINE_LENGTH) return console.error(line)
  console.error(JSON.stringify({ time, level, message: scrubCredentials(message.slice(0, 200)), truncated: true, head: line.slice(0, MAX_LINE_LENGTH - 400) }))
}

/** Bigints (micro-credits) would make JSON.stringify throw, and a log call must never throw. */
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}
