import { answerResponse, BINARY } from '../../http/openapi/responses'
import { surfaceEndpoint } from '../endpoint'
import { SPEECH_TYPES, SpeechSchema } from './schema'
import { speechSurface } from './surface'

export const speechEndpoint = surfaceEndpoint({
  path: '/v1/audio/speech',
  parse: 'json',
  schema: SpeechSchema,
  surface: speechSurface,
  response: {
    other: answerResponse(
      'The audio, in the `response_format` asked for (mp3 by default)',
      Object.fromEntries(Object.values(SPEECH_TYPES).map((type) => [type, BINARY])),
    ),
  },
  detail: { tags: ['Audio'], summary: 'Synthesise speech, billed per input character; answers audio bytes' },
})
