import { type Static, Type } from '@sinclair/typebox'
import type { NativeBody } from '../adapter'

/**
 * Vertex AI wire types the gateway writes and reads beyond Anthropic's messages format, which
 * Claude on Vertex speaks (its answers and streams are read by the anthropic folder's types).
 */

/** The API version Vertex AI's Anthropic publisher expects in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'

/** A messages body for `:rawPredict`: no `model` (the URL names it), an `anthropic_version` instead. */
export type RawPredictRequest = NativeBody & { anthropic_version: typeof VERTEX_ANTHROPIC_VERSION }

// ---- Veo (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation) ----

export type VeoImage = { bytesBase64Encoded: string; mimeType: string } | { gcsUri: string; mimeType: string }

export type PredictLongRunningRequest = {
  instances: { prompt: string; image?: VeoImage; lastFrame?: VeoImage }[]
  parameters: { sampleCount: 1; durationSeconds: number; aspectRatio?: string; resolution?: string; resizeMode?: string }
}

export type FetchPredictOperationRequest = { operationName: string }

const VeoVideo = Type.Union([
  Type.Object({ bytesBase64Encoded: Type.String({ minLength: 1 }), mimeType: Type.Optional(Type.String()) }),
  Type.Object({ gcsUri: Type.String({ minLength: 1 }), mimeType: Type.Optional(Type.String()) }),
])

/** A long-running operation, as `:predictLongRunning` starts it and `:fetchPredictOperation` reports it. */
export const Operation = Type.Object({
  name: Type.Optional(Type.String()),
  done: Type.Optional(Type.Boolean()),
  error: Type.Optional(Type.Object({ code: Type.Optional(Type.Number()), message: Type.Optional(Type.String()) })),
  response: Type.Optional(
    Type.Object({
      raiMediaFilteredCount: Type.Optional(Type.Number()),
      raiMediaFilteredReasons: Type.Optional(Type.Array(Type.String())),
      videos: Type.Optional(Type.Array(VeoVideo)),
    }),
  ),
})
export type Operation = Static<typeof Operation>

/** The operation a submit returns: its name is what every poll asks about. */
export const StartedOperation = Type.Object({ name: Type.String({ minLength: 1 }) })

// ---- OAuth 2.0 token exchange (RFC 6749 §5.1) ----

export const TokenResponse = Type.Object({ access_token: Type.String(), expires_in: Type.Optional(Type.Unknown()) })
