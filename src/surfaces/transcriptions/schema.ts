import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'

/**
 * POST /v1/audio/transcriptions: OpenAI's multipart form; unknown fields pass through. Numbers
 * are plain numbers: the form's text is read as one by the gateway's form check
 * (http/schema-check.ts), which names a field out of range.
 */
export const TranscriptionSchema = t.Object(
  {
    file: t.File(),
    model: t.String({ minLength: 1 }),
    language: t.Optional(t.String()),
    prompt: t.Optional(t.String()),
    // diarized_json (speaker-labelled segments) is JSON like verbose_json: priced and given usage.cost the same way.
    response_format: t.Optional(t.Union(['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'].map((format) => t.Literal(format)))),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: true },
)

export type TranscriptionBody = Static<typeof TranscriptionSchema>
