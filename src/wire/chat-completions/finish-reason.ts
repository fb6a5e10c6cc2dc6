import type { FinishReason } from '../../canonical/answer'

/** Chat completions finish reasons (https://platform.openai.com/docs/api-reference/chat/object) and the canonical ones, both ways. */

/** An upstream's finish reason in the canonical vocabulary. */
export function finishReasonOf(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop'
    case 'length':
      return 'length'
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls'
    case 'content_filter':
      return 'content-filter'
    default:
      return 'other'
  }
}

/** A canonical finish reason as the one a client reads. */
export function chatFinishReason(reason: FinishReason): string {
  switch (reason) {
    case 'length':
      return 'length'
    case 'tool-calls':
      return 'tool_calls'
    case 'content-filter':
      return 'content_filter'
    default:
      return 'stop'
  }
}
