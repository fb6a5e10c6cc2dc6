import type { FinishReason } from '../../canonical/answer'

/** Messages-format stop reasons (https://docs.claude.com/en/api/messages) and the canonical finish reasons, both ways. */

/** An upstream's stop reason in the canonical vocabulary. */
export function finishReasonOf(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
      return 'stop'
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length'
    case 'stop_sequence':
      return 'stop-sequence'
    case 'tool_use':
      return 'tool-calls'
    case 'refusal':
      return 'content-filter'
    default:
      return 'other'
  }
}

/** A canonical finish reason as the stop reason a client reads. */
export function stopReasonOf(reason: FinishReason): string {
  switch (reason) {
    case 'length':
      return 'max_tokens'
    case 'stop-sequence':
      return 'stop_sequence'
    case 'tool-calls':
      return 'tool_use'
    case 'content-filter':
      return 'refusal'
    default:
      return 'end_turn'
  }
}
