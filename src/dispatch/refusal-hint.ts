import { isLeaseableRefusal } from '../billing/lease-keys'
import { InsufficientBalanceError, QuotaExceededError, UserQuotaExceededError } from '../errors/kinds'
import type { OutputCap } from './surface'

/**
 * A hold refused for want of credit or by a spend limit, with what the client can do about it
 * when its output bound set the worst case (docs/billing.md#refusals): a conversation held for
 * the model's maximum output because no bound was set is served once the client sets a smaller
 * one. Other errors pass unchanged.
 */
export function withRefusalHint(error: unknown, cap: OutputCap | undefined): unknown {
  if (!cap || !isLeaseableRefusal(error)) return error
  const hint = cap.given
    ? `The worst case assumes ${cap.param} = ${cap.tokens} output tokens: a lower ${cap.param} needs less.`
    : `No ${cap.param} was set, so the worst case assumes the model's maximum of ${cap.tokens} output tokens: set ${cap.param} to need less.`
  const message = `${error.message} ${hint}`
  if (error instanceof InsufficientBalanceError) return new InsufficientBalanceError(message)
  if (error instanceof QuotaExceededError) return new QuotaExceededError(message)
  return new UserQuotaExceededError(message)
}
