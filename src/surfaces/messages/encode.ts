import type { Answer } from '../../canonical/answer'
import { randomToken } from '../../util/ids'
import { assistantBlockOf } from '../../wire/messages/content'
import type { MessageObject } from '../../wire/messages/message'
import { stopReasonOf } from '../../wire/messages/stop-reason'
import { messagesUsageOf } from '../../wire/messages/usage'

/** A canonical answer as a messages-format message object (https://docs.claude.com/en/api/messages). */
export function encodeMessage(answer: Answer, model: string, cost: number): MessageObject {
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model,
    content: answer.content.map(assistantBlockOf),
    stop_reason: stopReasonOf(answer.finishReason),
    stop_sequence: answer.stopSequence ?? null,
    usage: { ...messagesUsageOf(answer.usage), cost },
  }
}

/** An id in the messages format's own style: the answer does not reveal which route served it. */
export function messageId(): string {
  return `msg_${randomToken(24)}`
}
