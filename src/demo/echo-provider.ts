import { isRecord } from '../util/is-record'

/**
 * The demo's stand-in for a model provider: a loopback HTTP server that speaks OpenAI's chat
 * completions wire format (whole answers and streams, with usage) and answers every
 * conversation with "echo: " and the last user message. It is not a model and pretends to be
 * none. It lives only inside `tollgate demo` (docs/operations.md#demo): the gateway reaches it
 * as an ordinary `openai` provider, so a demo call goes through the real dispatcher and billing.
 */
export interface EchoProvider {
  /** The provider's base URL as a catalogue names it: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string
  stop(): void
}

/** What an echo answer starts with, so nobody mistakes it for a model's words. */
export const ECHO_PREFIX = 'echo: '

export function startEchoProvider(): EchoProvider {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      if (request.method !== 'POST' || path !== '/v1/chat/completions') {
        return errorResponse(404, `The demo echo provider serves only POST /v1/chat/completions, not ${request.method} ${path}.`)
      }
      let body: unknown
      try {
        body = await request.json()
      } catch {
        return errorResponse(400, 'The body is not JSON.')
      }
      if (!isRecord(body) || !Array.isArray(body.messages)) return errorResponse(400, 'messages must be an array.')
      const model = typeof body.model === 'string' ? body.model : 'echo'
      const answer = `${ECHO_PREFIX}${lastUserText(body.messages) ?? '(no user message)'}`
      const usage = usageOf(body.messages, answer)
      const wantsUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true
      return body.stream === true ? streamedAnswer(model, answer, wantsUsage ? usage : undefined) : wholeAnswer(model, answer, usage)
    },
  })
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    stop: () => {
      void server.stop(true)
    },
  }
}

interface EchoUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

const nowInSeconds = () => Math.floor(Date.now() / 1000)

function wholeAnswer(model: string, answer: string, usage: EchoUsage): Response {
  return Response.json({
    id: `chatcmpl-echo-${crypto.randomUUID()}`,
    object: 'chat.completion',
    created: nowInSeconds(),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answer, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage,
  })
}

/** One chunk per word, then the finish chunk and, when asked for, the usage chunk, then [DONE]. */
function streamedAnswer(model: string, answer: string, usage: EchoUsage | undefined): Response {
  const base = { id: `chatcmpl-echo-${crypto.randomUUID()}`, object: 'chat.completion.chunk', created: nowInSeconds(), model }
  const chunk = (delta: object, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  })
  const events = [
    chunk({ role: 'assistant', content: '' }),
    ...answer.split(/(?<= )/).map((word) => chunk({ content: word })),
    chunk({}, 'stop'),
    ...(usage ? [{ ...base, choices: [], usage }] : []),
  ]
  const text = `${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`
  return new Response(text, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } })
}

/** The text of the last user message: a plain string, or the text parts of a content array. */
function lastUserText(messages: unknown[]): string | undefined {
  const last = messages.findLast((message) => isRecord(message) && message.role === 'user')
  return isRecord(last) ? textOf(last.content) : undefined
}

function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return undefined
  const parts = content.flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : []))
  return parts.length > 0 ? parts.join('\n') : undefined
}

/**
 * Token counts as a rough four characters per token, at least one each: the echo has no
 * tokenizer, and only needs counts that are plausible and never zero, so every call is billed.
 */
function usageOf(messages: unknown[], answer: string): EchoUsage {
  const promptCharacters = messages.reduce((total: number, message) => total + (isRecord(message) ? (textOf(message.content)?.length ?? 0) : 0), 0)
  const prompt = Math.max(1, Math.ceil(promptCharacters / 4))
  const completion = Math.max(1, Math.ceil(answer.length / 4))
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

function errorResponse(status: number, message: string): Response {
  return Response.json({ error: { message, type: 'invalid_request_error', param: null, code: null } }, { status })
}
