/**
 * The client session a call belongs to (docs/billing.md#attribution): coding agents name theirs
 * in a header of their own, read in this order, the first present one counting. Claude Code
 * sends `x-claude-code-session-id`; Codex (0.169) sends `session-id`, the spelling of
 * `session_id` that passes proxies which drop underscored header names.
 */
const SESSION_HEADERS = ['x-claude-code-session-id', 'session_id', 'session-id', 'x-session-id'] as const

/** 1 to 128 visible ASCII characters: anything else is not a session id. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/

/**
 * The session id of a request with `headers`, or null: a value that is not one (empty, too long,
 * spaces or other characters) is ignored, not refused, since attribution must never fail a call.
 */
export function sessionIdOf(headers: Headers): string | null {
  for (const name of SESSION_HEADERS) {
    const value = headers.get(name)
    if (value !== null) return SESSION_ID.test(value) ? value : null
  }
  return null
}
