/** What the mock upstream does with the next request, whichever wire format it speaks. */

export interface ChatScript {
  kind?: 'chat'
  /** The answer's text, streamed word by word. */
  text?: string
  toolCalls?: { id: string; name: string; arguments: string }[]
  /** Messages format only: a thinking block (with its signature) before the text. */
  thinking?: { text: string; signature: string }
  /**
   * Reported usage; defaults derive from the request and the answer. Messages format:
   * `cache_write_tokens` are five-minute writes and `cache_write_1h_tokens` one-hour ones, both in
   * `cache_creation_input_tokens` and split in `cache_creation` unless `cache_split` is false.
   */
  usage?: {
    prompt_tokens: number
    completion_tokens: number
    cached_tokens?: number
    cache_write_tokens?: number
    cache_write_1h_tokens?: number
    cache_split?: false
    web_search_requests?: number
  }
  /** Leave usage out of the answer entirely (some compatible servers do). */
  omitUsage?: boolean
  /**
   * Transcriptions: the duration the answer reports (json: a usage of type duration, as Whisper
   * may send; verbose_json: `duration`, 9.5 s when unset); null: verbose_json reports none.
   */
  audioSeconds?: number | null
  /** Wait before the response headers. */
  delayMs?: number
  /** Wait between stream chunks. */
  chunkDelayMs?: number
  /** Close the connection after this many content chunks, without finishing. */
  cutAfterChunks?: number
  /** Go silent after this many content chunks: the connection stays open and nothing more comes. */
  silentAfterChunks?: number
  /** Send the whole stream, then leave its body open: the connection is never ended from this side. */
  openAfterEnd?: boolean
}

export interface ErrorScript {
  kind: 'error'
  status: number
  body?: unknown
  /** Response headers of the error answer (a 429's Retry-After). */
  headers?: Record<string, string>
  delayMs?: number
}

/** Never answers; the request ends only when the gateway aborts it. */
export interface HangScript {
  kind: 'hang'
}

/** A video job: in progress for a number of polls, then done one way or another. */
export interface VideoScript {
  kind: 'video'
  /** Polls answered "still running" before the job is done. */
  pollsBeforeDone?: number
  /** Or: the job is done once this long has passed since it started. */
  readyAfterMs?: number
  result?: 'ok' | 'failed' | 'blocked'
  /** Family A: return the clip as a gs:// URI instead of bytes. */
  asUri?: boolean
  /** The job runs forever: every poll says it is still in progress. */
  neverFinishes?: boolean
  /** OpenAI videos: DELETE of the running job is refused (400), as the API may for jobs in progress. */
  refuseCancel?: boolean
  delayMs?: number
}

export type Script = ChatScript | ErrorScript | HangScript | VideoScript

export const DEFAULT_TEXT = 'Hello! How can I assist you today?'

export function usageOf(body: any, script: ChatScript, answer: string) {
  return (
    script.usage ?? {
      prompt_tokens: JSON.stringify(body?.messages ?? []).length,
      completion_tokens: answer.split(' ').length,
    }
  )
}

/** Where a scripted stream stops early (cut or silent), as a count of content chunks; undefined: it finishes. */
export function stopAfterChunks(script: ChatScript): number | undefined {
  return script.cutAfterChunks ?? script.silentAfterChunks
}

/**
 * Streams `events` (already framed), pausing between them; then closes, breaks the connection
 * (`cutAfterChunks`) or goes silent with the connection open until the gateway leaves
 * (`silentAfterChunks`, `openAfterEnd`).
 */
export function streamEvents(events: string[], script: ChatScript): Response {
  const encoder = new TextEncoder()
  let gatewayLeft: () => void = () => {}
  const left = new Promise<void>((resolve) => (gatewayLeft = resolve))
  return new Response(
    new ReadableStream({
      async start(controller) {
        for (const event of events) {
          if (script.chunkDelayMs) await Bun.sleep(script.chunkDelayMs)
          try {
            controller.enqueue(encoder.encode(event))
          } catch {
            return // the gateway went away
          }
        }
        if (script.cutAfterChunks !== undefined) {
          // Let the chunks reach the gateway, then break the connection.
          await Bun.sleep(50)
          return controller.error(new Error('cut by the mock upstream'))
        }
        if (script.silentAfterChunks !== undefined || script.openAfterEnd) return left
        controller.close()
      },
      cancel() {
        gatewayLeft()
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  )
}
