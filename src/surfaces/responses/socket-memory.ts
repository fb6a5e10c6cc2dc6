/**
 * What a Responses WebSocket remembers of its last completed response, so a call may continue
 * it with `previous_response_id` and only the new input items. Codex does this on a socket
 * (its "incremental" requests, with `store: false`): the server is expected to keep the
 * conversation for the connection. The gateway serves each call as a whole POST
 * /v1/responses, so it sends the remembered items followed by the new ones, and every route,
 * translated or native, sees (and bills) the whole conversation, exactly as over HTTP.
 */
export interface SocketMemory {
  /** The id of the last response completed on the socket. */
  responseId: string
  /** The input that response was made from, followed by its output items. */
  items: unknown[]
}

/**
 * The whole input of a call that continues the socket's last response, or undefined when it
 * does not (no `previous_response_id`, or one naming another response: passed on as sent).
 */
export function connectedInput(body: { previous_response_id?: unknown; input?: unknown }, memory: SocketMemory | undefined): unknown[] | undefined {
  if (!memory || body.previous_response_id !== memory.responseId) return undefined
  const added = inputItems(body.input)
  return added ? [...memory.items, ...added] : undefined
}

/** A Responses `input` as a list of items: a string is one user message. Undefined for anything else (the schema refuses it). */
export function inputItems(input: unknown): unknown[] | undefined {
  if (Array.isArray(input)) return input
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }]
  return undefined
}
