import { RedisClient } from 'bun'
import { RateLimitError } from '../errors/kinds'
import { logEvent } from '../observability/log'
import { rateLimited } from '../observability/metrics'
import type { ApiKeyRow } from './api-keys'

const WINDOW_MS = 60_000
/** Counters outlive their minute slightly, so a late write never resurrects an expired one. */
const COUNTER_TTL_MS = WINDOW_MS + 1000

/** Counts per name within a window; shared across instances when backed by Redis. */
export interface HitCounter {
  /** Adds `amount` and returns the new total for this window. */
  add(name: string, amount: number, ttlMs: number): Promise<number>
  /** The total so far (0 when nothing was counted). */
  read(name: string): Promise<number>
  close(): void
}

export class MemoryHitCounter implements HitCounter {
  private readonly counts = new Map<string, { count: number; until: number }>()

  constructor(private readonly now: () => number) {}

  async add(name: string, amount: number, ttlMs: number): Promise<number> {
    const now = this.now()
    if (this.counts.size > 50_000) for (const [key, entry] of this.counts) if (entry.until <= now) this.counts.delete(key)
    const entry = this.counts.get(name)
    if (entry && entry.until > now) {
      entry.count += amount
      return entry.count
    }
    this.counts.set(name, { count: amount, until: now + ttlMs })
    return amount
  }

  async read(name: string): Promise<number> {
    const entry = this.counts.get(name)
    return entry && entry.until > this.now() ? entry.count : 0
  }

  close(): void {}
}

/** A counter that is known to be unreachable right now: the request passes without waiting for it. */
export class CounterUnavailableError extends Error {}

export interface RedisCounterOptions {
  /** How long one command may take before Redis counts as unreachable. */
  commandTimeoutMs?: number
  /** How long Redis is left alone after a failure before one request tries it again. */
  breakerOpenMs?: number
  now?: () => number
  /** Where the outage's start and end are reported (operational log by default). */
  log?: typeof logEvent
}

/** Redis on the same network answers in a millisecond; one that takes this long is as good as away. */
const DEFAULT_COMMAND_TIMEOUT_MS = 500
const DEFAULT_BREAKER_OPEN_MS = 5000

/**
 * Counts in Redis, behind a circuit breaker. While Redis is away its client queues commands
 * until it reconnects, so every request would wait out the timeout; after one failure the
 * breaker skips Redis for a few seconds, then lets a single request try it again. The outage
 * is logged once when it begins and once when it ends, not once per request.
 */
export class RedisHitCounter implements HitCounter {
  private readonly client: RedisClient
  private readonly commandTimeoutMs: number
  private readonly breakerOpenMs: number
  private readonly now: () => number
  private readonly log: typeof logEvent
  /** While now is before this, Redis is not asked. */
  private skipUntil = 0
  /** Set from the first failure until a command succeeds again. */
  private unreachable = false
  /** A request is trying Redis after the skip window: the others do not wait for it too. */
  private probing = false

  constructor(url: string, options: RedisCounterOptions = {}) {
    this.client = new RedisClient(url, { connectionTimeout: 2000, autoReconnect: true })
    this.commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS
    this.breakerOpenMs = options.breakerOpenMs ?? DEFAULT_BREAKER_OPEN_MS
    this.now = options.now ?? Date.now
    this.log = options.log ?? logEvent
  }

  add(name: string, amount: number, ttlMs: number): Promise<number> {
    return this.guarded(async () => {
      const count = Number(await this.client.send('INCRBY', [name, String(amount)]))
      if (count === amount) await this.client.send('PEXPIRE', [name, String(ttlMs)])
      return count
    })
  }

  read(name: string): Promise<number> {
    return this.guarded(async () => Number((await this.client.get(name)) ?? 0))
  }

  private async guarded<T>(work: () => Promise<T>): Promise<T> {
    if (this.unreachable && (this.probing || this.now() < this.skipUntil)) throw new CounterUnavailableError('Redis is unreachable')
    const probe = this.unreachable
    if (probe) this.probing = true
    try {
      const result = await this.bounded(work)
      if (this.unreachable) {
        this.unreachable = false
        this.log('info', 'rate-limit counter reachable again; limits apply')
      }
      return result
    } catch (error) {
      if (!this.unreachable) {
        this.unreachable = true
        this.log('warn', 'rate-limit counter unreachable; requests pass unlimited until it answers again', {
          error: String(error),
          retry_in_ms: this.breakerOpenMs,
        })
      }
      this.skipUntil = this.now() + this.breakerOpenMs
      throw new CounterUnavailableError('Redis is unreachable', { cause: error })
    } finally {
      if (probe) this.probing = false
    }
  }

  /** Bounded in time: while Redis is away, commands would wait in the client's queue. */
  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${this.commandTimeoutMs} ms`)), this.commandTimeoutMs)
    })
    try {
      return await Promise.race([work(), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  close(): void {
    this.client.close()
  }
}

/** What a caller used of the current minute, counted when a request is checked. */
interface MinuteCount {
  /** Requests counted, this one included when it was let through. */
  requests: number
  /** Tokens of settled calls counted (a call's own tokens count once it settles). */
  tokens: number
  /** Until the minute ends and both counts start again. */
  secondsLeft: number
}

/** Response headers, by lower-case name. */
export type RateLimitHeaders = Record<string, string>

/**
 * The rate-limit headers of a key's answer (docs/billing.md#rate-limit-headers), for each limit
 * the key has: the limit, what is left of it this minute, and the whole seconds until the minute
 * ends, when the count starts again (at least 1, as Retry-After).
 */
function rateLimitHeaders(limits: MinuteLimits, minute: MinuteCount): RateLimitHeaders {
  const reset = String(Math.max(1, Math.ceil(minute.secondsLeft)))
  const headers: RateLimitHeaders = {}
  for (const [unit, limit, used] of [
    ['requests', limits.rpm, minute.requests],
    ['tokens', limits.tpm, minute.tokens],
  ] as const) {
    if (limit === null) continue
    headers[`x-ratelimit-limit-${unit}`] = String(limit)
    headers[`x-ratelimit-remaining-${unit}`] = String(Math.max(0, limit - used))
    headers[`x-ratelimit-reset-${unit}`] = reset
  }
  return headers
}

/** A minute's limits: `rpm` requests and `tpm` tokens; null is no limit. */
export interface MinuteLimits {
  rpm: number | null
  tpm: number | null
}

/**
 * The default limits of the free endpoints (count_tokens, wallet, usage, pricing), per caller
 * and apart from a key's own: `TOLLGATE_FREE_RPM` and `TOLLGATE_FREE_TPM`, where tokens are those
 * count_tokens counted (docs/operations.md#limits).
 */
export const DEFAULT_FREE_LIMITS: MinuteLimits = { rpm: 120, tpm: 10_000_000 }

/**
 * Per-key limits in fixed calendar minutes (unset means no limit): `rpm` requests, and `tpm`
 * tokens, counted from what calls actually used once they settle. A request is refused while
 * the minute's tokens have reached the limit. A counter that cannot be reached lets requests
 * through: the limits protect upstream capacity, not money, which the holds guard on their own.
 * The free endpoints cost no credits but do cost CPU (count_tokens scans and parses a body of up
 * to 32 MiB), so every caller has limits there too, counted apart from its key's own.
 */
export class RateLimiter {
  private lastWarning = 0

  constructor(
    private counter: HitCounter,
    private readonly now: () => number,
    private readonly freeLimits: MinuteLimits = DEFAULT_FREE_LIMITS,
  ) {}

  /**
   * Counts in `counter` from now on: a worker without Redis counts in its primary, so the limits
   * hold across every worker of the instance (docs/operations.md#workers).
   */
  useCounter(counter: HitCounter): void {
    this.counter.close()
    this.counter = counter
  }

  /**
   * Counts a request of `key` against its limits, or refuses it (RateLimitError, with the
   * headers); the rate-limit headers of its answer otherwise, empty when the key has no limits
   * or the counter cannot be reached.
   */
  async checkRequest(key: ApiKeyRow): Promise<RateLimitHeaders> {
    const minute = await this.check(key.id, 'tollgate', key, 'This API key is limited to', (counted) => rateLimitHeaders(key, counted))
    return minute ? rateLimitHeaders(key, minute) : {}
  }

  /** A request to a free endpoint by the key or user `callerId`, against the free endpoints' limits. */
  async checkFree(callerId: string): Promise<void> {
    await this.check(callerId, 'tollgate:free', this.freeLimits, 'The free endpoints (count_tokens, wallet, usage, pricing) are limited to')
  }

  /** Counts a settled call's tokens against its key's minute. */
  async recordTokens(keyId: string, tokens: number): Promise<void> {
    await this.record(`tollgate:tpm:${keyId}`, tokens)
  }

  /** Counts the tokens count_tokens counted against its caller's minute on the free endpoints. */
  async recordFreeTokens(callerId: string, tokens: number): Promise<void> {
    if (this.freeLimits.tpm !== null) await this.record(`tollgate:free:tpm:${callerId}`, tokens)
  }

  /**
   * Counts a request against `limits`, or throws RateLimitError (with `headersOf` the minute
   * so far); the minute's counts, or undefined when there are no limits or the counter is away.
   */
  private async check(
    id: string,
    prefix: string,
    limits: MinuteLimits,
    refusal: string,
    headersOf: (minute: MinuteCount) => RateLimitHeaders = () => ({}),
  ): Promise<MinuteCount | undefined> {
    if (limits.rpm === null && limits.tpm === null) return undefined
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    const secondsLeft = ((window + 1) * WINDOW_MS - now) / 1000
    const requestsName = `${prefix}:rpm:${id}:${window}`
    try {
      const tokens = limits.tpm === null ? 0 : await this.counter.read(`${prefix}:tpm:${id}:${window}`)
      if (limits.tpm !== null && tokens >= limits.tpm) {
        rateLimited.inc({ limit: 'tpm' })
        // Refused before it is counted: the requests so far, as they are.
        const requests = limits.rpm === null ? 0 : await this.counter.read(requestsName)
        throw new RateLimitError(`${refusal} ${limits.tpm} tokens per minute.`, secondsLeft, headersOf({ requests, tokens, secondsLeft }))
      }
      const requests = limits.rpm === null ? 0 : await this.counter.add(requestsName, 1, COUNTER_TTL_MS)
      const minute = { requests, tokens, secondsLeft }
      if (limits.rpm !== null && requests > limits.rpm) {
        rateLimited.inc({ limit: 'rpm' })
        throw new RateLimitError(`${refusal} ${limits.rpm} requests per minute.`, secondsLeft, headersOf(minute))
      }
      return minute
    } catch (error) {
      if (error instanceof RateLimitError) throw error
      this.warn(error, now)
      return undefined
    }
  }

  private async record(name: string, tokens: number): Promise<void> {
    if (tokens <= 0) return
    const now = this.now()
    try {
      await this.counter.add(`${name}:${Math.floor(now / WINDOW_MS)}`, tokens, COUNTER_TTL_MS)
    } catch (error) {
      this.warn(error, now)
    }
  }

  private warn(error: unknown, now: number): void {
    // The counter reports its own outages once; repeating them per request would flood the log.
    if (error instanceof CounterUnavailableError) return
    if (now - this.lastWarning < WINDOW_MS) return
    this.lastWarning = now
    logEvent('warn', 'rate-limit counter unreachable; requests pass unlimited', { error: error instanceof Error ? error.message : String(error) })
  }
}
