import { scrubCredentials } from '../util/scrub-credentials'

/**
 * Operational events (not request logs): one JSON line each on stderr. Callers pass short,
 * parameter-free fields; database errors go through describeDatabaseError first.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** From the most to the least talkative: `TOLLGATE_LOG_LEVEL` keeps its own and those after it. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error']

export const DEFAULT_LOG_LEVEL: LogLevel = 'info'

/** Whether a line of `level` is written when the operator asked for `threshold` and above. */
export function meetsLevel(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold)
}

/** A value of `TOLLGATE_LOG_LEVEL` as a level; unset (or a value the config check refused at start) is the default. */
export function logLevelOf(value: string | undefined): LogLevel {
  return LOG_LEVELS.find((level) => level === value) ?? DEFAULT_LOG_LEVEL
}

/**
 * Events come from everywhere (the sweeper, the hold book, the rate limiter), most of them far
 * from the config: the level is read from the environment once, at the first event. The config
 * check has already refused a value that names no level (docs/configuration.md#configuration).
 */
let eventThreshold: LogLevel | undefined

/** An event's own fields, written beside time, level and message: free-form by design (each event names its own). */
export type LogFields = Record<string, unknown>

/** A line longer than this is cut: one bad value must not flood the log. */
const MAX_LINE_LENGTH = 4096

/** Fields on every event line of this process: a worker's slot and process id (docs/operations.md#workers). */
let processFields: LogFields = {}

/** From now on every event line of this process carries `fields` first (`{"worker":2,"pid":4711,…}`). */
export function tagEventLines(fields: LogFields): void {
  processFields = { ...fields }
}

/**
 * Writes one event, unless its level is below `TOLLGATE_LOG_LEVEL`. The line is scrubbed of
 * anything shaped like a credential, in case a field quoted one, and an oversized line keeps its
 * head as text inside a line that still parses.
 */
export function logEvent(level: LogLevel, message: string, fields: LogFields = {}): void {
  eventThreshold ??= logLevelOf(process.env.TOLLGATE_LOG_LEVEL)
  if (!meetsLevel(level, eventThreshold)) return
  console.error(eventLine(level, message, fields))
}

/**
 * An event as its JSON line, whatever the level threshold: for the few lines written to stdout
 * at every level (`listening`, which scripts and supervisors wait for).
 */
export function eventLine(level: LogLevel, message: string, fields: LogFields = {}): string {
  const time = new Date().toISOString()
  const line = scrubCredentials(JSON.stringify({ ...processFields, time, level, message, ...fields }, jsonSafe))
  if (line.length <= MAX_LINE_LENGTH) return line
  return JSON.stringify({
    ...processFields,
    time,
    level,
    message: scrubCredentials(message.slice(0, 200)),
    truncated: true,
    head: line.slice(0, MAX_LINE_LENGTH - 400),
  })
}

/** Bigints (micro-credits) would make JSON.stringify throw, and a log call must never throw. */
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}
