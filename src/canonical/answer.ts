import type { ReasoningPart, TextPart, ToolCallPart } from './prompt'
import type { Usage } from './usage'

/**
 * Why generation ended, in one vocabulary for every API: each provider's convert-response
 * maps its own reasons here, each surface's encoder maps them back out.
 */
export type FinishReason = 'stop' | 'length' | 'stop-sequence' | 'tool-calls' | 'content-filter' | 'error' | 'other'

/** A whole answer (non-streaming). */
export interface Answer {
  id: string
  content: (TextPart | ReasoningPart | ToolCallPart)[]
  finishReason: FinishReason
  /** The stop sequence that ended generation, when one did. */
  stopSequence?: string
  usage: Usage
}

/**
 * One piece of a streamed answer. Tool calls arrive as start, argument deltas (JSON text) and
 * end; the last part is `finish`, with the usage billing reads.
 */
export type StreamPart =
  | { type: 'start'; id: string }
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'reasoning-signature'; signature: string }
  | { type: 'tool-call-start'; id: string; name: string }
  | { type: 'tool-call-delta'; id: string; argumentsDelta: string }
  | { type: 'finish'; finishReason: FinishReason; stopSequence?: string; usage?: Usage }
