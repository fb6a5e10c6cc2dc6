import type { Caller } from '../auth/authenticate'
import type { Hold } from '../billing/hold-book'
import { microsToCredits } from '../billing/money'
import { chargeForUsage } from '../billing/pricing'
import { recordableUsage, UntrustedUsageError } from '../billing/usage-guard'
import { logEvent } from '../observability/log'
import type { RequestRecord } from '../observability/request-record'
import type { ModelEntry } from '../catalog/catalog-schema'
import type { Services } from '../services'
import type { Usage, UsageSource } from '../canonical/usage'
import type { Route } from './surface'

/** What a call is settled against: the catalogue model that priced it and the provider that served it. */
export type ServedBy = Pick<Route, 'model' | 'provider'>

/**
 * A provider's honest usage stays within the worst case the hold was sized for, give or take
 * the estimator's margin; a price beyond this many holds is a fault, not a bill.
 */
const PLAUSIBLE_OVERRUN = 4n

/** What settlement reports back to the client: the credits actually taken. */
export interface Settled {
  cost: number
}

/** A call with its hold taken: settles or releases exactly once, whatever happens; the first close wins. */
export class BilledCall {
  private closing: Promise<Settled> | undefined

  constructor(
    private readonly services: Services,
    readonly hold: Hold,
    /** The request's record: the hold and settlement are timed there, and the charge noted. */
    readonly record: RequestRecord,
  ) {}

  /** Takes the hold; `provider` is the first route's, recorded until a route answers. */
  static async open(services: Services, caller: Caller, amount: bigint, record: RequestRecord, model: string, provider: string): Promise<BilledCall> {
    const hold = await record.time('hold', async () => {
      const payer = await services.payers.payerFor(caller)
      return services.holds.take({ payer, amount, requestId: record.requestId, model, provider })
    })
    return new BilledCall(services, hold, record)
  }

  /** Charges the priced usage (capped at the hold); the rest of the hold is released. */
  settle(servedBy: ServedBy, usage: Usage, source: UsageSource): Promise<Settled> {
    const { model } = servedBy
    this.closing ??= this.close(servedBy, () => chargeForUsage(model.pricing, usage), usageRecord(usage, source), usage).then(async (closed) => {
      const { keyId, tokensPerMinute } = this.hold.payer
      if (closed.trusted && keyId && tokensPerMinute !== null) {
        const tokens = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens
        await this.services.rateLimiter.recordTokens(keyId, tokens).catch(() => undefined)
      }
      return { cost: closed.cost }
    })
    return this.closing
  }

  /** Charges a cost priced by the endpoint (images, characters, minutes), capped at the hold. */
  settleCost(servedBy: ServedBy, price: () => bigint, usage: Record<string, unknown>): Promise<Settled> {
    this.closing ??= this.close(servedBy, price, usage, undefined).then((closed) => ({ cost: closed.cost }))
    return this.closing
  }

  /**
   * Prices the usage and settles. Usage the upstream reported that pricing refuses (negative,
   * fractional, not a number), or whose price is far beyond the worst case the hold was sized
   * for, is not trusted: the call is charged its full hold and the ledger marks the usage
   * invalid (docs/billing.md#untrusted-usage). Never fails: the hold book retries a closing the database did
   * not take, and answers from the same arithmetic meanwhile.
   */
  private async close(
    servedBy: ServedBy,
    price: () => bigint,
    usage: Record<string, unknown>,
    tokens: Usage | undefined,
  ): Promise<{ cost: number; trusted: boolean }> {
    const { amount } = this.hold
    const model: ModelEntry = servedBy.model
    const provider = servedBy.provider.name
    let cost: bigint
    let invalid: string | undefined
    try {
      cost = price()
      if (cost > amount * PLAUSIBLE_OVERRUN) invalid = 'cost beyond the plausible worst case'
    } catch (error) {
      if (!(error instanceof UntrustedUsageError))
        logEvent('error', 'pricing failed', { request_id: this.hold.requestId, error: error instanceof Error ? error.message : String(error) })
      invalid = error instanceof UntrustedUsageError ? error.message : 'pricing failed'
      cost = amount
    }
    if (invalid !== undefined) {
      logEvent('warn', 'untrusted upstream usage: charged the full hold', { request_id: this.hold.requestId, model: model.id, provider, reason: invalid })
      cost = amount
    }
    const record = invalid === undefined ? usage : { ...recordableUsage(usage), invalid: true, invalid_reason: invalid }
    const closed = await this.record.time('settle', () => this.services.holds.settle(this.hold, cost, record, model.id, provider))
    const credits = microsToCredits(closed.charged)
    this.record.charged({ model: model.id, provider, ...(tokens && invalid === undefined ? { usage: tokens } : {}), cost: credits })
    return { cost: credits, trusted: invalid === undefined }
  }

  /** Not billed (upstream failure, client-fault error): the whole hold goes back. Never fails, like settle. */
  release(): Promise<Settled> {
    this.closing ??= this.services.holds.release(this.hold).then(() => ({ cost: 0 }))
    return this.closing
  }
}

function usageRecord(usage: Usage, source: UsageSource): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    web_search_requests: usage.webSearchRequests,
    source,
  }
}
