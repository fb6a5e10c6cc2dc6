import { RedisClient } from 'bun'
import type { ApiKeyRow } from './api-keys'
import { RateLimitError } from '../errors/kinds'

const WINDOW_MS = 60_000

/** Counts hits per name within a window; shared across instances when backed by Redis. */
export interface HitCounter {
  /** Adds one hit and returns the count so far in this window. */
  hit(name: string, ttlMs: number): Promise<number>
  close(): void
}

export class MemoryHitCounter implements HitCounter {
  private readonly counts = new Map<string, { count: number; until: number }>()

  constructor(private readonly now: () => number) {}

  async hit(name: string, ttlMs: number): Promise<number> {
    const now = this.now()
    if (this.counts.size > 50_000) for (const [key, entry] of this.counts) if (entry.until <= now) this.counts.delete(key)
    const entry = this.counts.get(name)
    if (entry && entry.until > now) return ++entry.count
    this.counts.set(name, { count: 1, until: now + ttlMs })
    return 1
  }

  close(): void {}
}

export class RedisHitCounter implements HitCounter {
  private readonly client: RedisClient

  constructor(url: string) {
    this.client = new RedisClient(url, { connectionTimeout: 2000, autoReconnect: true })
  }

  /** Bounded in time: while Redis is away, commands would wait in the client's queue. */
  async hit(name: string, ttlMs: number): Promise<number> {
    const counting = (async () => {
      const count = await this.client.incr(name)
      if (count === 1) await this.client.send('PEXPIRE', [name, String(ttlMs)])
      return count
    })()
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Redis did not answer within 1 s')), 1000)
    })
    try {
      return await Promise.race([counting, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  close(): void {
    this.client.close()
  }
}

/**
 * Requests per minute per API key (`rpm`; unset means no limit), in fixed calendar minutes.
 * A counter that cannot be reached lets requests through: the rate limit protects upstream
 * capacity, not money, which the holds guard on their own.
 */
export class RateLimiter {
  private lastWarning = 0

  constructor(
    private readonly counter: HitCounter,
    private readonly now: () => number,
  ) {}

  async checkRequest(key: ApiKeyRow): Promise<void> {
    if (key.rpm === null) return
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    let count: number
    try {
      count = await this.counter.hit(`tollgate:rpm:${key.id}:${window}`, WINDOW_MS + 1000)
    } catch (error) {
      this.warn(error, now)
      return
    }
    if (count > key.rpm) {
      throw new RateLimitError(`This API key is limited to ${key.rpm} requests per minute.`, ((window + 1) * WINDOW_MS - now) / 1000)
    }
  }

  private warn(error: unknown, now: number): void {
    if (now - this.lastWarning < WINDOW_MS) return
    this.lastWarning = now
    console.error(JSON.stringify({ level: 'warn', message: 'rate-limit counter unreachable; requests pass unlimited', error: String(error) }))
  }
}
