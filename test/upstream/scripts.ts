/** What the mock upstream does with the next request, whichever wire format it speaks. */

export interface ChatScript {
  kind?: 'chat'
  /** The answer's text, streamed word by word. */
  text?: string
  toolCalls?: { id: string; name: string; arguments: string }[]
  /** Messages format only: a thinking block (with its signature) before the text. */
  thinking?: { text: string; signature: string }
  /** Reported usage; defaults derive from the request and the answer. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; cache_write_tokens?: number; web_search_requests?: number }
  /** Leave usage out of the answer entirely (some compatible servers do). */
  omitUsage?: boolean
  /** Wait before the response headers. */
  delayMs?: number
  /** Wait between stream chunks. */
  chunkDelayMs?: number
  /** Close the connection after this many content chunks, without finishing. */
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

/** Streams `events` (already framed), pausing between them, optionally breaking the connection. */
export function streamEvents(events: string[], script: ChatScript, cut: boolean): Response {
  const encoder = new TextEncoder()
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
        if (!cut) return controller.close()
        // Let the chunks reach the gateway, then break the connection.
        await Bun.sleep(50)
        controller.error(new Error('cut by the mock upstream'))
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  )
}
