import { RedisClient } from 'bun'
import type { ApiKeyRow } from './api-keys'
import { RateLimitError } from '../errors/kinds'

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
    if (entry && entry.until > now) return (entry.count += amount)
    this.counts.set(name, { count: amount, until: now + ttlMs })
    return amount
  }

  async read(name: string): Promise<number> {
    const entry = this.counts.get(name)
    return entry && entry.until > this.now() ? entry.count : 0
  }

  close(): void {}
}

export class RedisHitCounter implements HitCounter {
  private readonly client: RedisClient

  constructor(url: string) {
    this.client = new RedisClient(url, { connectionTimeout: 2000, autoReconnect: true })
  }

  add(name: string, amount: number, ttlMs: number): Promise<number> {
    return this.bounded(async () => {
      const count = Number(await this.client.send('INCRBY', [name, String(amount)]))
      if (count === amount) await this.client.send('PEXPIRE', [name, String(ttlMs)])
      return count
    })
  }

  read(name: string): Promise<number> {
    return this.bounded(async () => Number((await this.client.get(name)) ?? 0))
  }

  /** Bounded in time: while Redis is away, commands would wait in the client's queue. */
  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Redis did not answer within 1 s')), 1000)
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

/**
 * Per-key limits in fixed calendar minutes (unset means no limit): `rpm` requests, and `tpm`
 * tokens, counted from what calls actually used once they settle. A request is refused while
 * the minute's tokens have reached the limit. A counter that cannot be reached lets requests
 * through: the limits protect upstream capacity, not money, which the holds guard on their own.
 */
export class RateLimiter {
  private lastWarning = 0

  constructor(
    private readonly counter: HitCounter,
    private readonly now: () => number,
  ) {}

  async checkRequest(key: ApiKeyRow): Promise<void> {
    if (key.rpm === null && key.tpm === null) return
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    const retryAfter = ((window + 1) * WINDOW_MS - now) / 1000
    try {
      if (key.tpm !== null && (await this.counter.read(tokensName(key.id, window))) >= key.tpm) {
        throw new RateLimitError(`This API key is limited to ${key.tpm} tokens per minute.`, retryAfter)
      }
      if (key.rpm !== null && (await this.counter.add(`tollgate:rpm:${key.id}:${window}`, 1, COUNTER_TTL_MS)) > key.rpm) {
        throw new RateLimitError(`This API key is limited to ${key.rpm} requests per minute.`, retryAfter)
      }
    } catch (error) {
      if (error instanceof RateLimitError) throw error
      this.warn(error, now)
    }
  }

  /** Counts a settled call's tokens against its key's minute. */
  async recordTokens(keyId: string, tokens: number): Promise<void> {
    if (tokens <= 0) return
    const now = this.now()
    try {
      await this.counter.add(tokensName(keyId, Math.floor(now / WINDOW_MS)), tokens, COUNTER_TTL_MS)
    } catch (error) {
      this.warn(error, now)
    }
  }

  private warn(error: unknown, now: number): void {
    if (now - this.lastWarning < WINDOW_MS) return
    this.lastWarning = now
    console.error(JSON.stringify({ level: 'warn', message: 'rate-limit counter unreachable; requests pass unlimited', error: String(error) }))
  }
}

function tokensName(keyId: string, window: number): string {
  return `tollgate:tpm:${keyId}:${window}`
}
