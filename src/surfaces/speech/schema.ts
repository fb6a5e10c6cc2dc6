import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'

/** The speech formats a client may ask for. */
const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const

/** The content type of each speech format, as the answer carries it. */
export const SPEECH_TYPES: Record<(typeof SPEECH_FORMATS)[number], string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
}

/**
 * OpenAI's limit on speech input. It bounds the hold (characters × the character price); the
 * schema counts UTF-16 units, so text outside the Basic Multilingual Plane (emoji) reaches it a
 * little before 4096 characters.
 */
const MAX_SPEECH_INPUT = 4096

/** POST /v1/audio/speech: OpenAI's request shape; unknown fields pass through. */
export const SpeechSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    input: t.String({ minLength: 1, maxLength: MAX_SPEECH_INPUT }),
    voice: t.Optional(t.String()),
    response_format: t.Optional(t.Union(SPEECH_FORMATS.map((format) => t.Literal(format)))),
    speed: t.Optional(t.Number({ minimum: 0.25, maximum: 4 })),
    instructions: t.Optional(t.String()),
  },
  { additionalProperties: true },
)

export type SpeechBody = Static<typeof SpeechSchema>
