/**
 * A loopback upstream speaking OpenAI's chat completions wire format (WIRE.md §1–2), scripted
 * per request, with faults: error statuses, delays, hangs, slow chunks, streams cut mid-way.
 * It records every request so tests can assert what the gateway forwarded.
 */

export interface ChatScript {
  kind?: 'chat'
  /** The answer's text, streamed word by word. */
  text?: string
  toolCalls?: { id: string; name: string; arguments: string }[]
  /** Reported usage; defaults derive from the request and the answer. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number }
  /** Leave usage out of the answer entirely (some compatible servers do). */
  omitUsage?: boolean
  /** Wait before the response headers. */
  delayMs?: number
  /** Wait between stream chunks. */
  chunkDelayMs?: number
  /** Close the connection after this many content chunks, with no [DONE]. */
  cutAfterChunks?: number
}

export interface ErrorScript {
  kind: 'error'
  status: number
  body?: unknown
  delayMs?: number
}

/** Never answers; the request ends only when the gateway aborts it. */
export interface HangScript {
  kind: 'hang'
}

export type Script = ChatScript | ErrorScript | HangScript

export interface ReceivedRequest {
  path: string
  headers: Record<string, string>
  body: any
}

export class MockUpstream {
  readonly received: ReceivedRequest[] = []
  /** Off for load: the benchmark sends more requests than are worth keeping. */
  keepRecords = true
  private readonly queue: Script[] = []
  private fallback: Script = {}
  private server: ReturnType<typeof Bun.serve> | undefined

  /** `http://127.0.0.1:<port>/v1`, an OpenAI provider's baseUrl. */
  get baseUrl(): string {
    if (!this.server) throw new Error('mock upstream not started')
    return `http://127.0.0.1:${this.server.port}/v1`
  }

  start(): this {
    this.server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: (request) => this.handle(request) })
    return this
  }

  stop(): void {
    this.server?.stop(true)
  }

  /** The next requests get these behaviours, in order; after them, the fallback. */
  script(...scripts: Script[]): this {
    this.queue.push(...scripts)
    return this
  }

  /** What every request gets once the scripted queue is empty. */
  always(script: Script): this {
    this.fallback = script
    return this
  }

  reset(): void {
    this.queue.length = 0
    this.received.length = 0
    this.fallback = {}
  }

  private async handle(request: Request): Promise<Response> {
    const body = await request.json().catch(() => undefined)
    if (this.keepRecords) this.received.push({ path: new URL(request.url).pathname, headers: Object.fromEntries(request.headers), body })
    const script = this.queue.shift() ?? this.fallback
    if (script.kind === 'hang') return new Promise<Response>(() => {})
    if (script.delayMs) await Bun.sleep(script.delayMs)
    if (script.kind === 'error') {
      const errorBody = script.body ?? { error: { message: `mock failure ${script.status}`, type: 'server_error', param: null, code: null } }
      return Response.json(errorBody, { status: script.status })
    }
    return body?.stream ? streamChat(body, script) : Response.json(completion(body, script))
  }
}

const CREATED = 1_741_569_952

function usageOf(body: any, script: ChatScript, answer: string) {
  const usage = script.usage ?? {
    prompt_tokens: JSON.stringify(body?.messages ?? []).length,
    completion_tokens: answer.split(' ').length,
  }
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: script.usage?.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  }
}

function completion(body: any, script: ChatScript) {
  const text = script.text ?? 'Hello! How can I assist you today?'
  const message = script.toolCalls
    ? { role: 'assistant', content: null, tool_calls: script.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })), refusal: null, annotations: [] }
    : { role: 'assistant', content: text, refusal: null, annotations: [] }
  return {
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    created: CREATED,
    model: body?.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: script.toolCalls ? 'tool_calls' : 'stop' }],
    ...(script.omitUsage ? {} : { usage: usageOf(body, script, text) }),
    service_tier: 'default',
  }
}

function streamChat(body: any, script: ChatScript): Response {
  const text = script.text ?? 'Hello! How can I assist you today?'
  const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: CREATED, model: body?.model, system_fingerprint: 'fp_mock' }
  const withUsage = body?.stream_options?.include_usage === true && !script.omitUsage
  const chunk = (delta: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })
  const content: object[] = script.toolCalls
    ? script.toolCalls.flatMap((call, index) => [
        { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
        ...splitInTwo(call.arguments).map((part) => ({ tool_calls: [{ index, function: { arguments: part } }] })),
      ])
    : text.split(/(?<= )/).map((word) => ({ content: word }))
  const events: string[] = [JSON.stringify(chunk({ role: 'assistant', content: '', refusal: null }))]
  content.forEach((delta) => events.push(JSON.stringify(chunk(delta))))
  const cut = script.cutAfterChunks
  if (cut === undefined) {
    events.push(JSON.stringify(chunk({}, script.toolCalls ? 'tool_calls' : 'stop')))
    if (withUsage) events.push(JSON.stringify({ ...base, choices: [], usage: usageOf(body, script, text) }))
    events.push('[DONE]')
  }
  const shown = cut === undefined ? events : events.slice(0, cut + 1)
  const encoder = new TextEncoder()
  return new Response(
    new ReadableStream({
      async start(controller) {
        for (const data of shown) {
          if (script.chunkDelayMs) await Bun.sleep(script.chunkDelayMs)
          try {
            controller.enqueue(encoder.encode(`data: ${data}\n\n`))
          } catch {
            return // the gateway went away
          }
        }
        if (cut === undefined) return controller.close()
        // Let the chunks reach the gateway, then break the connection.
        await Bun.sleep(50)
        controller.error(new Error('cut by the mock upstream'))
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  )
}

function splitInTwo(text: string): string[] {
  const middle = Math.floor(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}
