import { t } from 'elysia'
import { answerResponse } from '../../http/openapi/responses'
import { surfaceEndpoint } from '../endpoint'
import { TranscriptionSchema } from './schema'
import { transcriptionSurface } from './surface'

/** The JSON answer: the provider's transcript with `usage.cost` added. */
const TranscriptionAnswerSchema = t.Object(
  { text: t.String(), usage: t.Object({ cost: t.Number({ description: 'Credits charged' }) }, { additionalProperties: true }) },
  { additionalProperties: true },
)

export const transcriptionsEndpoint = surfaceEndpoint({
  path: '/v1/audio/transcriptions',
  parse: 'formdata',
  schema: TranscriptionSchema,
  surface: transcriptionSurface,
  response: {
    json: TranscriptionAnswerSchema,
    other: answerResponse('The transcript: JSON for `json`, `verbose_json` and `diarized_json`; text for `text`, `srt` and `vtt`', {
      'text/plain': t.String(),
    }),
  },
  detail: { tags: ['Audio'], summary: 'Transcribe audio (multipart), billed on the transcript and the audio minutes the provider reports' },
})
