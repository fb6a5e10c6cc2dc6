import { eq, lt } from 'drizzle-orm'
import type { Database } from '../db/client'
import { holds, ledgerEntries } from '../db/schema'
import { adjustKeySpend, adjustWallets } from './hold-rows'

export interface SweeperOptions {
  instanceId: string
  ttlMs: number
  intervalMs: number
  now: () => number
}

/**
 * Keeps this process's open holds alive and gives back the holds of processes that stopped
 * (CONTRACT.md §5.6): every tick extends our own holds' expiry, then expires anyone's hold whose
 * owner has not extended it within the TTL.
 */
export class HoldSweeper {
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly db: Database,
    private readonly options: SweeperOptions,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.options.intervalMs)
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  async tick(): Promise<void> {
    try {
      await this.heartbeat()
      await this.expire()
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', message: 'hold sweep failed', error: String(error) }))
    }
  }

  async heartbeat(): Promise<void> {
    await this.db
      .update(holds)
      .set({ expiresAt: new Date(this.options.now() + this.options.ttlMs) })
      .where(eq(holds.instanceId, this.options.instanceId))
  }

  /** Expires stale holds; with `everyOpenHold`, all open holds (an embedded database has no other process). */
  async expire(options: { everyOpenHold?: boolean } = {}): Promise<number> {
    const now = new Date(this.options.now())
    return this.db.transaction(async (tx) => {
      const expired = await tx
        .delete(holds)
        .where(options.everyOpenHold ? undefined : lt(holds.expiresAt, now))
        .returning()
      if (expired.length === 0) return 0
      await adjustWallets(tx, expired, (hold) => ({ held: -hold.amount, balance: 0n }))
      await adjustKeySpend(tx, expired, (hold) => [{ month: hold.month, held: -hold.amount, charged: 0n }])
      await tx.insert(ledgerEntries).values(
        expired.map((hold) => ({
          kind: 'expire' as const,
          amount: hold.amount,
          walletId: hold.walletId,
          payerType: hold.payerType,
          accountId: hold.accountId,
          keyId: hold.keyId,
          userSub: hold.userSub,
          env: hold.env,
          requestId: hold.requestId,
          holdId: hold.id,
          model: hold.model,
          route: hold.route,
          createdAt: now,
        })),
      )
      return expired.length
    })
  }
}
