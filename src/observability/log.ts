/**
 * Operational events (not request logs): one JSON line each on stderr. Callers pass short,
 * parameter-free fields; database errors go through describeDatabaseError first.
 */
export type EventLevel = 'debug' | 'info' | 'warn' | 'error'

/** A line longer than this is cut: one bad value must not flood the log. */
const MAX_LINE_LENGTH = 4096

export function logEvent(level: EventLevel, message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })
  console.error(line.length > MAX_LINE_LENGTH ? `${line.slice(0, MAX_LINE_LENGTH)}…` : line)
}
