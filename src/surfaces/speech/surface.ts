import { chargePerMillion } from '../../billing/pricing'
import type { Surface } from '../../dispatch/surface'
import { type MediaRoute, mediaPlan } from '../routes'
import { resolveTypedModel } from '../typed-model'
import { SPEECH_TYPES, type SpeechBody } from './schema'

/**
 * POST /v1/audio/speech, OpenAI-format routes only. Billed per input character, counted in
 * Unicode code points: known before the call, so the hold is the charge. The audio streams
 * through to the client in the format it asked for (mp3 by default).
 */
export const speechSurface: Surface<SpeechBody, MediaRoute> = {
  async plan(services, { caller, body }) {
    const characters = [...body.input].length
    const format = body.response_format ?? 'mp3'
    const resolved = await resolveTypedModel(services, caller, body.model, 'speech', '/v1/audio/speech')
    const { model } = resolved
    return mediaPlan(resolved, {
      holdAmount: chargePerMillion(model.pricing.inputChars, characters),
      send: (route, target) => route.media.send(target, '/audio/speech', JSON.stringify({ ...body, model: route.upstreamModel })),
      price: async (response) => ({
        cost: () => chargePerMillion(model.pricing.inputChars, characters),
        usage: { input_characters: characters },
        respond: () => new Response(response.body, { headers: { 'content-type': SPEECH_TYPES[format] } }),
      }),
    })
  },
}
