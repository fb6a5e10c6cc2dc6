import type { Caller } from '../auth/authenticate'
import type { Hold } from '../billing/hold'
import { microsToCredits } from '../billing/money'
import { chargeForUsage } from '../billing/pricing'
import { recordableUsage, UntrustedUsageError, type UsageAnomaly, usageAnomalies } from '../billing/usage-guard'
import { allInputTokens, type Usage, type UsageRecord, type UsageSource } from '../canonical/usage'
import type { ModelEntry } from '../catalog/catalog-schema'
import { logEvent } from '../observability/log'
import { usageAnomaliesTotal } from '../observability/metrics'
import type { RequestRecord } from '../observability/request-record'
import type { ProviderConfig } from '../providers/provider-config'
import type { Services } from '../services/services'

/** What a billed call reaches: who pays for a caller, the hold book, and the token counts of rate limits. */
export type BillingServices = Pick<Services, 'payers' | 'holds' | 'rateLimiter'>

/**
 * What a call is settled against: the catalogue model that priced it, the provider that served
 * it and, for a conversation, the most output tokens that provider was asked for.
 */
export interface ServedBy {
  model: ModelEntry
  provider: ProviderConfig
  outputTokenLimit?: number
}

/** What settlement reports back to the client: the credits actually taken. */
export interface Settled {
  cost: number
}

/** A call with its hold taken: settles or releases exactly once, whatever happens; the first close wins. */
export class BilledCall {
  private closing: Promise<Settled> | undefined

  constructor(
    private readonly services: BillingServices,
    readonly hold: Hold,
    /** The request's record: the hold and settlement are timed there, and the charge noted. */
    readonly record: RequestRecord,
  ) {}

  /** Takes the hold; `provider` is the first route's, recorded until a route answers; `sessionId` goes on every ledger entry of the call. */
  static async open(
    services: BillingServices,
    caller: Caller,
    amount: bigint,
    record: RequestRecord,
    model: string,
    provider: string,
    sessionId: string | null = null,
  ): Promise<BilledCall> {
    const hold = await record.time('hold', async () => {
      const payer = await services.payers.payerFor(caller)
      return services.holds.take({ payer, amount, requestId: record.requestId, sessionId, model, provider })
    })
    return new BilledCall(services, hold, record)
  }

  /** Charges the priced usage (capped at the hold); the rest of the hold is released. */
  settle(servedBy: ServedBy, usage: Usage, source: UsageSource): Promise<Settled> {
    const { model } = servedBy
    // Only the provider's own count is held to the limit it was given: the gateway's estimate may overshoot it.
    const limit = source === 'provider' ? servedBy.outputTokenLimit : undefined
    const output = limit === undefined ? undefined : { tokens: usage.outputTokens, limit }
    this.closing ??= this.close(servedBy, () => chargeForUsage(model.pricing, usage), usageRecord(usage, source), usage, output).then(async (closed) => {
      const { keyId, tokensPerMinute } = this.hold.payer
      if (closed.trusted && keyId && tokensPerMinute !== null) {
        const tokens = allInputTokens(usage) + usage.outputTokens
        await this.services.rateLimiter.recordTokens(keyId, tokens).catch(() => undefined)
      }
      return { cost: closed.cost }
    })
    return this.closing
  }

  /** Charges a cost priced by the endpoint (images, characters, minutes), capped at the hold. */
  settleCost(servedBy: ServedBy, price: () => bigint, usage: UsageRecord): Promise<Settled> {
    this.closing ??= this.close(servedBy, price, usage, undefined).then((closed) => ({ cost: closed.cost }))
    return this.closing
  }

  /**
   * Prices the usage and settles (docs/billing.md#untrusted-usage). Usage the upstream reported
   * that pricing refuses (negative, fractional, not a number) is not trusted: the call is charged
   * its full hold and the ledger marks the usage invalid. Usage pricing takes is the upstream's
   * bill, however large: the charge is capped at the hold and the hold book records the rest as
   * uncollected; when it is implausible (more output than asked for, a price beyond the
   * plausible worst case) the ledger also marks it anomalous. Never fails: the hold book retries
   * a closing the database did not take, and answers from the same arithmetic meanwhile.
   */
  private async close(
    servedBy: ServedBy,
    price: () => bigint,
    usage: UsageRecord,
    tokens: Usage | undefined,
    output?: { tokens: number; limit: number },
  ): Promise<{ cost: number; trusted: boolean }> {
    const { amount } = this.hold
    const model: ModelEntry = servedBy.model
    const provider = servedBy.provider.name
    let cost: bigint
    let invalid: string | undefined
    let anomalies: UsageAnomaly[] = []
    try {
      cost = price()
      anomalies = usageAnomalies({ cost, hold: amount, output })
    } catch (error) {
      if (!(error instanceof UntrustedUsageError))
        logEvent('error', 'pricing failed', { request_id: this.hold.requestId, error: error instanceof Error ? error.message : String(error) })
      invalid = error instanceof UntrustedUsageError ? error.message : 'pricing failed'
      cost = amount
    }
    if (invalid !== undefined) {
      logEvent('warn', 'untrusted upstream usage: charged the full hold', { request_id: this.hold.requestId, model: model.id, provider, reason: invalid })
    }
    for (const anomaly of anomalies) usageAnomaliesTotal.inc({ provider, reason: anomaly.reason })
    const anomalous = anomalies.map((anomaly) => anomaly.detail).join('; ')
    if (anomalous) {
      logEvent('warn', 'anomalous upstream usage: priced as reported, the excess uncollected', {
        request_id: this.hold.requestId,
        model: model.id,
        provider,
        reason: anomalous,
      })
    }
    const record =
      invalid !== undefined
        ? { ...recordableUsage(usage), invalid: true, invalid_reason: invalid }
        : anomalous
          ? { ...usage, anomalous: true, anomalous_reason: anomalous }
          : usage
    const closed = await this.record.time('settle', () => this.services.holds.settle(this.hold, cost, record, model.id, provider))
    const credits = microsToCredits(closed.charged)
    this.record.charged({ model: model.id, provider, ...(tokens && invalid === undefined ? { usage: tokens } : {}), cost: credits, costMicros: closed.charged })
    return { cost: credits, trusted: invalid === undefined }
  }

  /** Not billed (upstream failure, client-fault error): the whole hold goes back. Never fails, like settle. */
  release(): Promise<Settled> {
    this.closing ??= this.services.holds.release(this.hold).then(() => ({ cost: 0 }))
    return this.closing
  }
}

function usageRecord(usage: Usage, source: UsageSource): UsageRecord {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    cache_write_1h_tokens: usage.cacheWrite1hTokens,
    web_search_requests: usage.webSearchRequests,
    source,
  }
}
