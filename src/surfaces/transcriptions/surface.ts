import { MAX_AUDIO_BYTES, transcriptionHoldSeconds } from '../../billing/audio-duration'
import { estimateTextTokens } from '../../billing/estimator'
import { chargePerMillion, chargePerMinute } from '../../billing/pricing'
import { trustedCount, trustedSeconds } from '../../billing/usage-guard'
import type { ModelEntry } from '../../catalog/catalog-schema'
import type { PricedAnswer, Surface } from '../../dispatch/surface'
import { RequestTooLargeError } from '../../errors/kinds'
import { jsonObject, readJsonObject, usageWithCost } from '../../streaming/upstream-json'
import { type MediaRoute, mediaPlan } from '../routes'
import { resolveTypedModel } from '../typed-model'
import type { TranscriptionBody } from './schema'

/** Holds assume this much transcript per minute of audio: fast speech, in tokens. */
const TRANSCRIPT_TOKENS_PER_MINUTE = 300

/**
 * POST /v1/audio/transcriptions, OpenAI-format routes only: the client's form goes as it came
 * (the model replaced by the route's). The hold covers the audio's minutes and a fast speaker's
 * transcript of them; the charge is what the answer reports.
 */
export const transcriptionSurface: Surface<TranscriptionBody, MediaRoute> = {
  async plan(services, { caller, body }) {
    if (body.file.size > MAX_AUDIO_BYTES) throw new RequestTooLargeError('Audio files are limited to 25 MiB.', { param: 'file' })
    // The duration read from the file's container (bounded against a lying header): billed when
    // the answer reports none, and held in whole seconds, rounded up, since the provider bills
    // what it decodes and the hold must cover it.
    const measuredSeconds = await transcriptionHoldSeconds(body.file)
    const seconds = Math.ceil(measuredSeconds)
    const resolved = await resolveTypedModel(services, caller, body.model, 'transcription', '/v1/audio/transcriptions')
    const { model } = resolved
    return mediaPlan(resolved, {
      holdAmount:
        chargePerMinute(model.pricing.audioMinute, seconds) + chargePerMillion(model.pricing.output, Math.ceil((seconds / 60) * TRANSCRIPT_TOKENS_PER_MINUTE)),
      send: (route, target) => route.media.send(target, '/audio/transcriptions', transcriptionForm(body, route.upstreamModel)),
      price: (response) => priceTranscript(model, response, measuredSeconds),
    })
  },
}

/** The client's form as it came, the model replaced by the route's. */
function transcriptionForm(body: TranscriptionBody, model: string): FormData {
  const form = new FormData()
  for (const [name, value] of Object.entries(body)) {
    if (name === 'model') continue
    const items: unknown[] = Array.isArray(value) ? value : [value]
    for (const item of items) {
      if (item instanceof File) form.append(name, item, item.name)
      else if (item !== undefined && item !== null) form.append(name, String(item))
    }
  }
  form.append('model', model)
  return form
}

/**
 * The transcript at the output price (the provider's token count, else the gateway's own) plus
 * the audio minutes at `audioMinute`: the duration the provider reports (`duration`, or a
 * `usage` of type `duration` with its `seconds`), else `measuredSeconds`, what the gateway read
 * from the file (text, srt and vtt answers never report one). JSON answers get `usage.cost`;
 * text, srt and vtt pass through as text. Reported counts are checked only when priced: one
 * pricing refuses charges the full hold and marks the usage invalid (BilledCall), it does not
 * fail the call.
 */
async function priceTranscript(model: ModelEntry, response: Response, measuredSeconds: number): Promise<PricedAnswer> {
  const contentType = response.headers.get('content-type') ?? 'text/plain; charset=utf-8'
  if (!contentType.includes('json')) {
    const text = await response.text()
    const tokens = estimateTextTokens(text)
    return {
      cost: () => chargePerMillion(model.pricing.output, tokens) + chargePerMinute(model.pricing.audioMinute, measuredSeconds),
      usage: { output_tokens: tokens, source: 'estimate', audio_seconds: measuredSeconds, audio_source: 'measured' },
      respond: () => new Response(text, { headers: { 'content-type': contentType } }),
    }
  }
  const answer = await readJsonObject(response)
  const usage = jsonObject(answer.usage)
  // A field that is null reports nothing, as one that is absent.
  const reportedTokens = usage?.output_tokens ?? undefined
  const tokens = reportedTokens ?? estimateTextTokens(typeof answer.text === 'string' ? answer.text : '')
  const reportedSeconds = answer.duration ?? (usage?.type === 'duration' ? usage.seconds : undefined) ?? undefined
  const seconds = reportedSeconds ?? measuredSeconds
  return {
    cost: () =>
      chargePerMillion(model.pricing.output, trustedCount(tokens, 'count')) + chargePerMinute(model.pricing.audioMinute, trustedSeconds(seconds, 'seconds')),
    usage: {
      output_tokens: tokens,
      source: reportedTokens === undefined ? 'estimate' : 'provider',
      audio_seconds: seconds,
      audio_source: reportedSeconds === undefined ? 'measured' : 'provider',
    },
    respond: (credits: number) => Response.json({ ...answer, usage: usageWithCost(answer.usage, credits) }),
  }
}
