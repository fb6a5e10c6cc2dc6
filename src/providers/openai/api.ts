import { type Static, Type } from '@sinclair/typebox'

/**
 * OpenAI wire types only the provider reads (https://platform.openai.com/docs/api-reference):
 * video jobs and error bodies. The chat completions and Responses formats, which clients speak
 * too, are in src/wire/. Only the fields used are named; everything else passes.
 */

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]))

// ---- Videos (https://platform.openai.com/docs/api-reference/videos/object) ----

export const VideoResource = Type.Object({
  id: Type.String({ minLength: 1 }),
  status: Type.Union([Type.Literal('queued'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('failed')]),
  seconds: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Null()])),
  error: Type.Optional(Type.Union([Type.Object({ code: NullableString, message: NullableString }), Type.Null()])),
})
export type VideoResource = Static<typeof VideoResource>

// ---- Errors (every endpoint) ----

export const ErrorBody = Type.Object({
  error: Type.Object({ message: Type.Optional(Type.Unknown()), param: Type.Optional(Type.Unknown()), code: Type.Optional(Type.Unknown()) }),
})
