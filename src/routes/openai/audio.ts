import { Elysia, t } from 'elysia'
import { MAX_AUDIO_BYTES, transcriptionHoldSeconds } from '../../billing/audio-duration'
import { estimateTextTokens } from '../../billing/estimator'
import { chargePerMillion, chargePerMinute } from '../../billing/pricing'
import type { ModelEntry } from '../../catalog/catalog-schema'
import { billedEndpoint, openAiPassthrough, type PricedAnswer } from '../../dispatch/openai-endpoint'
import { RequestTooLargeError } from '../../errors/kinds'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'

/** Response content types by speech format (CONTRACT.md §7). */
const SPEECH_TYPES = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' } as const

/**
 * OpenAI's limit on speech input. It bounds the hold (characters × the character price); the
 * schema counts UTF-16 units, so text outside the Basic Multilingual Plane (emoji) reaches it a
 * little before 4096 characters.
 */
const MAX_SPEECH_INPUT = 4096

export const SpeechSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    input: t.String({ minLength: 1, maxLength: MAX_SPEECH_INPUT }),
    voice: t.Optional(t.String()),
    response_format: t.Optional(t.Union(Object.keys(SPEECH_TYPES).map((format) => t.Literal(format)))),
    speed: t.Optional(t.Number({ minimum: 0.25, maximum: 4 })),
    instructions: t.Optional(t.String()),
  },
  { additionalProperties: true },
)

/** Holds assume this much transcript per minute of audio: fast speech, in tokens. */
const TRANSCRIPT_TOKENS_PER_MINUTE = 300

export const TranscriptionSchema = t.Object(
  {
    file: t.File(),
    model: t.String({ minLength: 1 }),
    language: t.Optional(t.String()),
    prompt: t.Optional(t.String()),
    // diarized_json (speaker-labelled segments) is JSON like verbose_json: priced and given usage.cost the same way.
    response_format: t.Optional(t.Union(['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'].map((format) => t.Literal(format)))),
    temperature: t.Optional(t.Numeric({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: true },
)

export function audioRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/audio' })
    .use(context)
    .post(
      '/v1/audio/speech',
      ({ body, caller, requestId, request }) => {
        // Billed per input character, counted in Unicode code points: known before the call.
        const characters = [...body.input].length
        const format = body.response_format ?? 'mp3'
        return billedEndpoint(
          services,
          caller,
          {
            modelId: body.model,
            type: 'speech',
            endpoint: '/v1/audio/speech',
            ...openAiPassthrough('/audio/speech', (model) => JSON.stringify({ ...body, model })),
            hold: (model) => chargePerMillion(model.pricing.inputChars, characters),
            async price(model, response) {
              return {
                cost: () => chargePerMillion(model.pricing.inputChars, characters),
                usage: { input_characters: characters },
                respond: () => new Response(response.body, { headers: { 'content-type': SPEECH_TYPES[format] } }),
              }
            },
          },
          requestId,
          request.signal,
        )
      },
      { parse: 'json', body: SpeechSchema, detail: { tags: ['Audio'], summary: 'Synthesise speech, billed per input character; answers audio bytes' } },
    )
    .post(
      '/v1/audio/transcriptions',
      async ({ body, caller, requestId, request }) => {
        if (body.file.size > MAX_AUDIO_BYTES) throw new RequestTooLargeError('Audio files are limited to 25 MiB.', { param: 'file' })
        // The duration read from the file's container (bounded against a lying header), in
        // whole seconds, rounded up: the provider bills what it decodes, the hold must cover it.
        const seconds = Math.ceil(await transcriptionHoldSeconds(body.file))
        return billedEndpoint(
          services,
          caller,
          {
            modelId: body.model,
            type: 'transcription',
            endpoint: '/v1/audio/transcriptions',
            ...openAiPassthrough('/audio/transcriptions', (model) => transcriptionForm(body, model)),
            hold: (model) =>
              chargePerMinute(model.pricing.audioMinute, seconds) + chargePerMillion(model.pricing.output, Math.ceil((seconds / 60) * TRANSCRIPT_TOKENS_PER_MINUTE)),
            price: priceTranscript,
          },
          requestId,
          request.signal,
        )
      },
      {
        parse: 'formdata',
        body: TranscriptionSchema,
        detail: { tags: ['Audio'], summary: 'Transcribe audio (multipart), billed on the transcript and the audio minutes the provider reports' },
      },
    )
}

/** The client's form as it came, the model replaced by the route's. */
function transcriptionForm(body: Record<string, unknown>, model: string): FormData {
  const form = new FormData()
  for (const [name, value] of Object.entries(body)) {
    if (name === 'model') continue
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item instanceof File) form.append(name, item, item.name)
      else if (item !== undefined && item !== null) form.append(name, String(item))
    }
  }
  form.append('model', model)
  return form
}

/**
 * The transcript at the output price (the provider's token count, else the gateway's own) plus
 * the audio minutes at `audioMinute` when the provider reports a duration. JSON answers get
 * `usage.cost`; text, srt and vtt pass through as text.
 */
async function priceTranscript(model: ModelEntry, response: Response): Promise<PricedAnswer> {
  const contentType = response.headers.get('content-type') ?? 'text/plain; charset=utf-8'
  if (!contentType.includes('json')) {
    const text = await response.text()
    const tokens = estimateTextTokens(text)
    return {
      cost: () => chargePerMillion(model.pricing.output, tokens),
      usage: { output_tokens: tokens, source: 'estimate' },
      respond: () => new Response(text, { headers: { 'content-type': contentType } }),
    }
  }
  const answer = (await response.json()) as { text?: string; duration?: number; usage?: { type?: string; output_tokens?: number; seconds?: number } }
  const tokens = answer.usage?.output_tokens ?? estimateTextTokens(typeof answer.text === 'string' ? answer.text : '')
  const seconds = answer.duration !== undefined ? answer.duration : answer.usage?.type === 'duration' ? answer.usage.seconds : undefined
  return {
    cost: () => chargePerMillion(model.pricing.output, tokens) + (seconds === undefined ? 0n : chargePerMinute(model.pricing.audioMinute, seconds)),
    usage: { output_tokens: tokens, ...(seconds === undefined ? {} : { audio_seconds: seconds }) },
    respond: (credits: number) => Response.json({ ...answer, usage: { ...(answer.usage ?? {}), cost: credits } }),
  }
}
