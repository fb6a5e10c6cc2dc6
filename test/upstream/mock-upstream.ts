import { anthropicError, message } from './anthropic-messages'
import { chatCompletion } from './openai-chat'
import type { Script } from './scripts'

export type { ChatScript, ErrorScript, HangScript, Script } from './scripts'

/**
 * A loopback upstream speaking each provider's wire format (WIRE.md): OpenAI chat completions
 * at `/v1/chat/completions`, Anthropic messages at `/v1/messages`. Scripted per request, with
 * faults: error statuses, delays, hangs, slow chunks, streams cut mid-way. It records every
 * request so tests can assert what the gateway forwarded.
 */
export interface ReceivedRequest {
  path: string
  query: string
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
    return `${this.origin}/v1`
  }

  /** `http://127.0.0.1:<port>`, an Anthropic provider's baseUrl. */
  get origin(): string {
    if (!this.server) throw new Error('mock upstream not started')
    return `http://127.0.0.1:${this.server.port}`
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
    const url = new URL(request.url)
    const body = await request.json().catch(() => undefined)
    if (this.keepRecords) this.received.push({ path: url.pathname, query: url.search, headers: Object.fromEntries(request.headers), body })
    const anthropic = url.pathname === '/v1/messages'
    const script = this.queue.shift() ?? this.fallback
    if (script.kind === 'hang') return new Promise<Response>(() => {})
    if (script.delayMs) await Bun.sleep(script.delayMs)
    if (script.kind === 'error') {
      const fallbackBody = anthropic
        ? anthropicError(script.status)
        : { error: { message: `mock failure ${script.status}`, type: 'server_error', param: null, code: null } }
      return Response.json(script.body ?? fallbackBody, { status: script.status })
    }
    return anthropic ? message(body, script) : chatCompletion(body, script)
  }
}
