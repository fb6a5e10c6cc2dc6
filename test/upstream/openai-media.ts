import type { ChatScript } from './scripts'

/**
 * OpenAI's embeddings, images and audio endpoints (docs/upstreams.md#openai-images-and-audio): embeddings as floats or as
 * base64 little-endian float32 (what the SDK asks for by default), images as b64_json or url,
 * speech as bytes, transcriptions in each response format.
 */
export const MOCK_VECTOR = [0.25, -0.5, 0.125]

export function embeddings(body: any, script: ChatScript): Response {
  const inputs: unknown[] = Array.isArray(body?.input) && typeof body.input[0] !== 'number' ? body.input : [body?.input]
  const encode = (vector: number[]) => (body?.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector)
  const tokens = script.usage?.prompt_tokens ?? inputs.length * 8
  return Response.json({
    object: 'list',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: encode(MOCK_VECTOR.map((value) => value * (index + 1))) })),
    model: body?.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  })
}

export function images(body: any): Response {
  const count = body?.n ?? 1
  const item = body?.response_format === 'url' ? { url: 'https://images.example/cat.png', revised_prompt: body?.prompt } : { b64_json: 'iVBORw0KGgo=' }
  return Response.json({
    created: 1_713_833_628,
    data: Array.from({ length: count }, () => item),
    usage: { total_tokens: 100, input_tokens: 50, output_tokens: 50 },
  })
}

/** The bytes a speech answer carries: recognisable in tests, and as long as the input. */
export function speechBytes(input: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(new TextEncoder().encode(`AUDIO:${input}`))
}

export function speech(body: any): Response {
  return new Response(speechBytes(String(body?.input ?? '')), { headers: { 'content-type': 'application/octet-stream' } })
}

export const TRANSCRIPT = 'The sun rises over the quiet town.'

export function transcription(form: Record<string, string>, script: ChatScript): Response {
  const format = form.response_format ?? 'json'
  const duration = 9.5
  if (format === 'verbose_json') {
    if (script.audioSeconds === null) return Response.json({ task: 'transcribe', language: 'english', text: TRANSCRIPT, segments: [] })
    const reported = script.audioSeconds ?? duration
    return Response.json({
      task: 'transcribe',
      language: 'english',
      duration: reported,
      text: TRANSCRIPT,
      segments: [],
      usage: { type: 'duration', seconds: Math.ceil(reported) },
    })
  }
  if (format === 'diarized_json') {
    const segments = [
      { type: 'transcript.text.segment', id: 'seg_0', start: 0, end: 4.2, speaker: 'A', text: 'The sun rises' },
      { type: 'transcript.text.segment', id: 'seg_1', start: 4.2, end: duration, speaker: 'B', text: 'over the quiet town.' },
    ]
    const outputTokens = script.usage?.completion_tokens ?? 11
    return Response.json({
      task: 'transcribe',
      duration,
      text: TRANSCRIPT,
      segments,
      usage: { type: 'tokens', input_tokens: 14, output_tokens: outputTokens, total_tokens: 14 + outputTokens },
    })
  }
  if (format === 'json' && typeof script.audioSeconds === 'number') {
    return Response.json({ text: TRANSCRIPT, usage: { type: 'duration', seconds: script.audioSeconds } })
  }
  if (format === 'json') {
    const outputTokens = script.usage?.completion_tokens ?? 9
    return Response.json({ text: TRANSCRIPT, usage: { type: 'tokens', input_tokens: 14, output_tokens: outputTokens, total_tokens: 14 + outputTokens } })
  }
  const text =
    format === 'srt'
      ? `1\n00:00:00,000 --> 00:00:09,500\n${TRANSCRIPT}\n`
      : format === 'vtt'
        ? `WEBVTT\n\n00:00:00.000 --> 00:00:09.500\n${TRANSCRIPT}\n`
        : TRANSCRIPT
  return new Response(text, { headers: { 'content-type': 'text/plain; charset=utf-8' } })
}
