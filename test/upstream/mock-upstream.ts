import { anthropicError, message } from './anthropic-messages'
import { batchEmbedContents, generateContent, googleError, streamGenerateContent } from './gemini'
import { chatCompletion } from './openai-chat'
import { embeddings, images, speech, transcription } from './openai-media'
import { responses } from './openai-responses'
import type { Script } from './scripts'
import { openAiVideoContent, openAiVideoCreate, openAiVideoDelete, openAiVideoRetrieve, VideoJobs, veoFetch, veoStart } from './videos'

export type { ChatScript, ErrorScript, HangScript, Script } from './scripts'

/** The Gemini API: the model and the method are in the path. */
const GEMINI = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/

/** Veo on Vertex AI's Google publisher endpoint. */
const VEO = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/([^/:]+):(predictLongRunning|fetchPredictOperation)$/
const OPENAI_VIDEO = /^\/v1\/videos\/([^/]+)(\/content)?$/

/** Vertex AI's Anthropic publisher endpoint: the model and the method are in the path. */
const VERTEX_CLAUDE = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/

/**
 * A loopback upstream speaking each provider's wire format (docs/upstreams.md): OpenAI chat completions
 * at `/v1/chat/completions`, Anthropic messages at `/v1/messages`, Claude on Vertex AI at
 * `…/publishers/anthropic/models/{model}:rawPredict|streamRawPredict`, the Gemini API at
 * `/v1beta/models/{model}:generateContent|streamGenerateContent`, and a Google OAuth token
 * endpoint at `/token` for service-account grants. Scripted per request, with
 * faults: error statuses, delays, hangs, slow chunks, streams cut mid-way or gone silent, video
 * jobs that never finish. It records every request so tests can assert what the gateway
 * forwarded, and whether the gateway left before the answer was over.
 */
export interface ReceivedRequest {
  method: string
  path: string
  query: string
  headers: Record<string, string>
  body: any
  /** The gateway closed the connection before the answer was complete (it aborted the request). */
  aborted: boolean
}

export class MockUpstream {
  readonly received: ReceivedRequest[] = []
  /** Off for load: the benchmark sends more requests than are worth keeping. */
  keepRecords = true
  private readonly queue: Script[] = []
  private fallback: Script = {}
  private server: ReturnType<typeof Bun.serve> | undefined
  readonly videos = new VideoJobs()

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
    this.videos.cancelled.length = 0
    this.fallback = {}
  }

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const body = request.headers.get('content-type')?.startsWith('multipart/form-data') ? await formFields(request) : parseBody(await request.text())
    if (this.keepRecords) {
      const record: ReceivedRequest = {
        method: request.method,
        path: url.pathname,
        query: url.search,
        headers: Object.fromEntries(request.headers),
        body,
        aborted: false,
      }
      request.signal.addEventListener('abort', () => (record.aborted = true), { once: true })
      this.received.push(record)
    }
    if (url.pathname === '/token') return Response.json({ access_token: 'ya29.mock-token', expires_in: 3600, token_type: 'Bearer' })
    const vertex = VERTEX_CLAUDE.exec(url.pathname)
    const anthropic = url.pathname === '/v1/messages' || vertex !== null
    const gemini = GEMINI.exec(url.pathname)
    // Polls belong to the job that is running; they take no script of their own.
    const veo = VEO.exec(url.pathname)
    if (veo?.[2] === 'fetchPredictOperation') return veoFetch(this.videos, String(body?.operationName ?? ''))
    const videoPath = OPENAI_VIDEO.exec(url.pathname)
    if (videoPath && request.method === 'GET') return videoPath[2] ? openAiVideoContent() : openAiVideoRetrieve(this.videos, videoPath[1]!)
    if (videoPath && request.method === 'DELETE') return openAiVideoDelete(this.videos, videoPath[1]!)
    const script = this.queue.shift() ?? this.fallback
    if (script.kind === 'hang') return new Promise<Response>(() => {})
    if (script.delayMs) await Bun.sleep(script.delayMs)
    if (script.kind === 'error') {
      const fallbackBody = anthropic
        ? anthropicError(script.status)
        : gemini
          ? googleError(script.status)
          : { error: { message: `mock failure ${script.status}`, type: 'server_error', param: null, code: null } }
      return Response.json(script.body ?? fallbackBody, { status: script.status, headers: script.headers })
    }
    if (script.kind === 'video' || veo || url.pathname === '/v1/videos') {
      const job = script.kind === 'video' ? script : { kind: 'video' as const }
      return veo ? veoStart(this.videos, job, veo[1]!) : openAiVideoCreate(this.videos, body, job)
    }
    if (gemini?.[2] === 'batchEmbedContents') return batchEmbedContents(body)
    if (gemini) return gemini[2] === 'generateContent' ? generateContent(body, script, gemini[1]!) : streamGenerateContent(body, script, gemini[1]!)
    switch (url.pathname) {
      case '/v1/embeddings':
        return embeddings(body, script)
      case '/v1/responses':
        return responses(body, script)
      case '/v1/images/generations':
        return images(body)
      case '/v1/audio/speech':
        return speech(body)
      case '/v1/audio/transcriptions':
        return transcription(body, script)
    }
    // Vertex names the model in the path; the answer names it as Anthropic's API would.
    const answered = vertex ? { ...body, model: vertex[1] } : body
    return anthropic ? message(answered, script) : chatCompletion(body, script)
  }
}

/** JSON bodies parsed, form bodies as their fields, anything else as text. */
function parseBody(text: string): any {
  try {
    return JSON.parse(text)
  } catch {
    return text.includes('=') ? Object.fromEntries(new URLSearchParams(text)) : text || undefined
  }
}

/**
 * A multipart form's fields; a file appears as `<name>:<size> bytes` (and `<field>_dimensions`
 * as `WxH` for a PNG) so tests can see what arrived.
 */
async function formFields(request: Request): Promise<Record<string, string>> {
  const fields: Record<string, string> = {}
  for (const [name, value] of await request.formData()) {
    if (typeof value === 'string') {
      fields[name] = value
      continue
    }
    fields[name] = `${value.name}:${value.size} bytes`
    const header = new DataView(await value.slice(0, 24).arrayBuffer())
    // A PNG's IHDR holds the width and height at bytes 16 and 20.
    if (value.type === 'image/png' && header.byteLength === 24) fields[`${name}_dimensions`] = `${header.getUint32(16)}x${header.getUint32(20)}`
  }
  return fields
}
