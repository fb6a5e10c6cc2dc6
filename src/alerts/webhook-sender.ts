import type { Database } from '../db/database'
import { describeDatabaseError } from '../db/errors'
import { logEvent } from '../observability/log'
import { randomToken } from '../util/ids'
import { isStorableText } from '../util/storable-text'
import { raiseBalanceAlerts } from './balance-alerts'
import { type AttemptOutcome, type ClaimedDelivery, claimDueDeliveries, deleteFinishedDeliveries, recordAttempt } from './delivery-statements'
import { subscribedTypes } from './events'
import { periodQuotaSpends } from './period-quota-spends'
import { raiseQuotaAlerts } from './quota-thresholds'
import { signDelivery } from './signature'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/**
 * The waits after each failed attempt: growing, and together over 24 hours (some 31.7), after
 * which a delivery that never got a 2xx is `failed`.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
  8 * HOUR,
  8 * HOUR,
]

/** Delivered and failed deliveries are deleted this long after their event (docs/operations.md#alerts). */
export const DELIVERY_RETENTION_MS = 30 * 24 * HOUR
/** How often an instance looks for deliveries past their retention, once a look has found them all. */
const UPKEEP_EVERY_MS = HOUR
/** Statements one tick's upkeep runs at most: what is left waits for the next tick. */
const UPKEEP_BATCHES_PER_TICK = 10

export interface WebhookSenderOptions {
  now: () => number
  /** How often alerts are looked for and due deliveries claimed (default 1 s). */
  pollMs?: number
  /** The wait after each failed attempt; once they are used up, the next failure is final (default DEFAULT_RETRY_DELAYS_MS). */
  retryDelaysMs?: readonly number[]
  /** How long a receiver has to answer with a 2xx (default 10 s). */
  timeoutMs?: number
  /** How long a claim keeps other instances off a delivery (default 60 s): longer than an attempt can take. */
  claimMs?: number
  /** Deliveries in flight at once from this instance (default 8). */
  maxInFlight?: number
  /** How attempts reach the network (tests may watch it). */
  fetch?: typeof fetch
  /** Old deliveries deleted by one statement of the upkeep (default 1000). */
  upkeepBatch?: number
}

/** Bytes of a receiver's answer read at most: only a short excerpt of a refusal is kept. */
const MAX_ANSWER_BYTES = 4096
const MAX_ERROR_LENGTH = 200
/** A result not recorded at once is tried this many times more; after that the claim runs out and the delivery is sent again. */
const RECORD_ATTEMPTS = 3

/**
 * The alerts' one background loop per instance (docs/operations.md#alerts): each tick looks for
 * new alerts (low balances, quota thresholds) and stores them, then claims the deliveries due and
 * sends them, signed, a few at a time. Nothing on a billed call waits for it, and it keeps no
 * queue in memory: the database holds every event until it is delivered or given up, so a
 * restart or a crash loses none, and a delivery whose outcome was lost is sent again.
 */
export class WebhookSender {
  private timer: ReturnType<typeof setInterval> | undefined
  private ticking = false
  private stopped = false
  private readonly inFlight = new Set<AbortController>()
  private readonly retryDelaysMs: readonly number[]
  private readonly timeoutMs: number
  private readonly claimMs: number
  private readonly maxInFlight: number
  private readonly send: typeof fetch
  private readonly upkeepBatch: number
  /** When the delivery log is next looked at for old rows (the sender's clock); at the first tick. */
  private nextUpkeepAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly db: Database,
    private readonly options: WebhookSenderOptions,
  ) {
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS
    this.timeoutMs = options.timeoutMs ?? 10 * SECOND
    this.claimMs = options.claimMs ?? 60 * SECOND
    this.maxInFlight = options.maxInFlight ?? 8
    this.send = options.fetch ?? fetch
    this.upkeepBatch = options.upkeepBatch ?? 1000
  }

  /** Ticks every poll interval from now on; the first tick comes one interval after the start. */
  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.options.pollMs ?? SECOND)
    this.timer.unref()
  }

  /** Stops ticking and abandons the attempts in flight: their claims run out and another tick (here or elsewhere) sends them again. */
  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
    this.timer = undefined
    for (const controller of this.inFlight) controller.abort()
  }

  /** Deliveries being sent now. */
  get sending(): number {
    return this.inFlight.size
  }

  /**
   * One look for alerts, one claim of due deliveries and, now and then, the delivery log's
   * upkeep; a failure is logged and the next tick tries again. A tick that a stop overtook ends
   * quietly: its database may be closing.
   */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return
    this.ticking = true
    try {
      const types = await subscribedTypes(this.db)
      if (types.size === 0) return
      const now = new Date(this.options.now())
      if (types.has('balance.low')) await this.attempt('balance alerts', () => raiseBalanceAlerts(this.db, now))
      if (types.has('quota.threshold')) await this.attempt('quota alerts', async () => raiseQuotaAlerts(this.db, await periodQuotaSpends(this.db, now), now))
      if (this.stopped) return
      await this.claimAndSend()
      if (now.getTime() >= this.nextUpkeepAt) await this.attempt('old webhook deliveries', () => this.deleteOldDeliveries(now))
    } catch (error) {
      if (!this.stopped) logEvent('error', 'webhook tick failed', { error: describeDatabaseError(error) })
    } finally {
      this.ticking = false
    }
  }

  /**
   * Deletes delivered and failed deliveries past DELIVERY_RETENTION_MS, a batch per statement and
   * a few statements per tick, so a large backlog never holds a tick long: when it is not all
   * gone, the next tick goes on, and when it is, the next look comes UPKEEP_EVERY_MS later.
   */
  private async deleteOldDeliveries(now: Date): Promise<void> {
    const before = new Date(now.getTime() - DELIVERY_RETENTION_MS)
    for (let batch = 0; batch < UPKEEP_BATCHES_PER_TICK; batch++) {
      if (this.stopped) return
      if ((await deleteFinishedDeliveries(this.db, before, this.upkeepBatch)) < this.upkeepBatch) {
        this.nextUpkeepAt = now.getTime() + UPKEEP_EVERY_MS
        return
      }
    }
  }

  private async attempt(what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work()
    } catch (error) {
      if (!this.stopped) logEvent('error', `looking for ${what} failed`, { error: describeDatabaseError(error) })
    }
  }

  private async claimAndSend(): Promise<void> {
    const free = this.maxInFlight - this.inFlight.size
    if (free <= 0) return
    const now = this.options.now()
    const claimed = await claimDueDeliveries(this.db, free, new Date(now), new Date(now + this.claimMs), randomToken(24))
    // Stopped meanwhile: nothing is sent, and the claims run out for another tick to take.
    if (this.stopped) return
    for (const delivery of claimed) void this.deliver(delivery)
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const controller = new AbortController()
    this.inFlight.add(controller)
    try {
      const outcome = await this.attemptOnce(delivery, controller)
      if (this.stopped && outcome.status !== 'delivered') return
      await this.record(delivery, outcome)
    } finally {
      this.inFlight.delete(controller)
    }
  }

  /** One signed POST, answered within the timeout; the answer's body is read only for a short excerpt of a refusal. */
  private async attemptOnce(delivery: ClaimedDelivery, controller: AbortController): Promise<AttemptOutcome> {
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.timeoutMs)
    try {
      const timestamp = Math.floor(this.options.now() / 1000)
      const response = await this.send(delivery.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Tollgate-Webhooks',
          'webhook-id': delivery.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signDelivery(delivery.secret, delivery.eventId, timestamp, delivery.body),
        },
        body: delivery.body,
        redirect: 'manual',
        // A connection per attempt: deliveries are rare, and a pooled connection the receiver
        // dropped (a restart) would hold an attempt until its timeout.
        keepalive: false,
        signal: controller.signal,
      })
      if (response.status >= 200 && response.status < 300) {
        await response.body?.cancel().catch(() => {})
        return { status: 'delivered', statusCode: response.status, error: null, nextAttemptAt: null }
      }
      const excerpt = await answerExcerpt(response)
      return this.failed(delivery, response.status, `HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`)
    } catch (error) {
      return this.failed(delivery, null, timedOut ? `no answer within ${this.timeoutMs / SECOND} s` : connectionError(error))
    } finally {
      clearTimeout(timer)
    }
  }

  private failed(delivery: ClaimedDelivery, statusCode: number | null, error: string): AttemptOutcome {
    const delay = this.retryDelaysMs[delivery.attempts - 1]
    if (delay === undefined) return { status: 'failed', statusCode, error, nextAttemptAt: null }
    return { status: 'pending', statusCode, error, nextAttemptAt: new Date(this.options.now() + delay) }
  }

  private async record(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await recordAttempt(this.db, delivery, outcome, new Date(this.options.now()))
        return
      } catch (error) {
        // A stopped sender's database may be closing: the claim runs out and the delivery is sent again.
        if (this.stopped) return
        if (attempt > RECORD_ATTEMPTS) {
          // The claim runs out and the delivery is tried again: a receiver may see it twice (docs/operations.md#alerts).
          logEvent('error', 'a webhook delivery outcome could not be recorded', { event_id: delivery.eventId, error: describeDatabaseError(error) })
          return
        }
        await Bun.sleep(250 * attempt)
      }
    }
  }
}

/** The start of a refusal's body, at most MAX_ANSWER_BYTES read, as one short printable line. */
async function answerExcerpt(response: Response): Promise<string> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < MAX_ANSWER_BYTES) {
      const { value, done } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
    }
  } catch {
    // What was read is enough.
  } finally {
    await reader.cancel().catch(() => {})
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES))
  const printable = Array.from(text, (character) => (character < ' ' || character === '\u007f' ? ' ' : character)).join('')
  const line = printable.replace(/\s+/g, ' ').trim().slice(0, MAX_ERROR_LENGTH)
  return isStorableText(line) ? line : ''
}

function connectionError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  const text = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error)
  return `could not be sent: ${text}`.slice(0, MAX_ERROR_LENGTH)
}
