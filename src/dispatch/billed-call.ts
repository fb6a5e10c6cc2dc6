import type { Caller } from '../auth/authenticate'
import type { Hold } from '../billing/hold-book'
import { microsToCredits } from '../billing/money'
import { chargeForUsage } from '../billing/pricing'
import { recordableUsage, UntrustedUsageError } from '../billing/usage-guard'
import type { ModelEntry } from '../catalog/catalog-schema'
import type { ProviderConfig } from '../config'
import { GatewayError } from '../errors/gateway-error'
import { UpstreamError } from '../errors/kinds'
import { logEvent } from '../observability/log'
import type { ProviderAdapter, UpstreamTarget } from '../providers/adapter'
import type { Services } from '../services'
import type { Usage, UsageSource } from '../spec/usage'
import { firstAnswer, type UpstreamAnswer } from './failover'

/** What every stream relay needs: the upstream's answer, the call to settle, and what priced it. */
export interface RelayParams {
  upstream: Response
  abortUpstream: () => void
  call: BilledCall
  model: ModelEntry
  route: string
  adapter: ProviderAdapter
  /** The gateway's estimate, billed when an abandoned stream has no provider usage. */
  inputTokens: number
}

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
  ) {}

  static async open(services: Services, caller: Caller, amount: bigint, requestId: string, model: string, route: string): Promise<BilledCall> {
    const payer = await services.payers.payerFor(caller)
    const hold = await services.holds.take({ payer, amount, requestId, model, route })
    return new BilledCall(services, hold)
  }

  /** Charges the priced usage (capped at the hold); the rest of the hold is released. */
  settle(model: ModelEntry, route: string, usage: Usage, source: UsageSource): Promise<Settled> {
    this.closing ??= this.close(model, route, () => chargeForUsage(model.pricing, usage), usageRecord(usage, source)).then(async (closed) => {
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
  settleCost(model: ModelEntry, route: string, price: () => bigint, usage: Record<string, unknown>): Promise<Settled> {
    this.closing ??= this.close(model, route, price, usage).then((closed) => ({ cost: closed.cost }))
    return this.closing
  }

  /**
   * Prices the usage and settles. Usage the upstream reported that pricing refuses (negative,
   * fractional, not a number), or whose price is far beyond the worst case the hold was sized
   * for, is not trusted: the call is charged its full hold and the ledger marks the usage
   * invalid (CONTRACT.md §7). Never fails: the hold book retries a closing the database did
   * not take, and answers from the same arithmetic meanwhile.
   */
  private async close(model: ModelEntry, route: string, price: () => bigint, usage: Record<string, unknown>): Promise<{ cost: number; trusted: boolean }> {
    const { amount } = this.hold
    let cost: bigint
    let invalid: string | undefined
    try {
      cost = price()
      if (cost > amount * PLAUSIBLE_OVERRUN) invalid = 'cost beyond the plausible worst case'
    } catch (error) {
      if (!(error instanceof UntrustedUsageError)) logEvent('error', 'pricing failed', { request_id: this.hold.requestId, error: error instanceof Error ? error.message : String(error) })
      invalid = error instanceof UntrustedUsageError ? error.message : 'pricing failed'
      cost = amount
    }
    if (invalid !== undefined) {
      logEvent('warn', 'untrusted upstream usage: charged the full hold', { request_id: this.hold.requestId, model: model.id, route, reason: invalid })
      cost = amount
    }
    const record = invalid === undefined ? usage : { ...recordableUsage(usage), invalid: true, invalid_reason: invalid }
    const closed = await this.services.holds.settle(this.hold, cost, record, model.id, route)
    return { cost: microsToCredits(closed.charged), trusted: invalid === undefined }
  }

  /**
   * Tries the routes in order with failover (failover.ts); when none answers, the hold is
   * released and the error goes on to the client.
   */
  async reach<Option extends { provider: ProviderConfig; adapter: ProviderAdapter; upstreamModel: string }>(
    options: Option[],
    send: (option: Option, target: UpstreamTarget) => Promise<Response>,
    clientSignal: AbortSignal,
  ): Promise<UpstreamAnswer<Option>> {
    try {
      return await firstAnswer(
        options,
        (option, signal) => send(option, { provider: option.provider, model: option.upstreamModel, signal }),
        (option, status, text) => option.adapter.mapError(status, text),
        clientSignal,
      )
    } catch (error) {
      await this.release()
      throw error
    }
  }

  /** The upstream's JSON object; a body that is not one (or goes silent) releases the hold and fails the call. */
  async readJson(response: Response): Promise<Record<string, unknown>> {
    let body: unknown
    try {
      body = await response.json()
    } catch (error) {
      await this.release()
      throw error instanceof GatewayError ? error : new UpstreamError('The upstream answered with a body that is not JSON.', { cause: error })
    }
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>
    await this.release()
    throw new UpstreamError('The upstream answered with JSON that is not an object.')
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
