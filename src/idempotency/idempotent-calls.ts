import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError } from '../db/errors'
import type { IdempotentCallState } from '../db/schema'
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../errors/kinds'
import { logEvent } from '../observability/log'

/** A key's place: the caller (`key:<id>` or `user:<id>`), the path, and the key itself. */
export interface CallIdentity {
  scope: string
  path: string
  key: string
}

/** What a call answered, as it was sent: kept for the replay. */
export interface KeptAnswer {
  status: number
  contentType: string | null
  body: Uint8Array
}

/** A claim's outcome: this request runs the call, or it gets the first call's answer. */
export type ClaimOutcome = { kind: 'run'; claim: Claim } | { kind: 'replay'; answer: KeptAnswer; requestId: string }

/** How long an answer is kept after the call ended. */
export const KEPT_FOR_MS = 24 * 60 * 60 * 1000
/** The largest answer kept; a larger one is not replayed (422). */
export const MAX_KEPT_ANSWER_BYTES = 10 * 1024 * 1024
/** What a client waiting on a running call is told: the answer is usually a few seconds away. */
const IN_USE_RETRY_AFTER_SECONDS = 1
/** Rows deleted per sweep statement. */
const SWEEP_PAGE = 1000
/** A claim's keep or free is tried this many times (doubling delays from 100 ms) before it is left to the lease. */
const WRITE_ATTEMPTS = 4

export interface IdempotentCallsOptions {
  /** This process, named as the owner of the calls it runs. */
  instanceId: string
  /** How long a running claim stays this instance's without a renewal (the hold TTL). */
  leaseMs: number
  now: () => number
}

interface CallRow {
  fingerprint: string
  state: IdempotentCallState
  request_id: string
  /** Epoch milliseconds. */
  lease_until: number
  /** Epoch milliseconds. */
  expires_at: number
  status: number | null
  content_type: string | null
  body: Uint8Array | null
}

/**
 * The idempotent calls of every instance, in the database (docs/api.md#idempotent-retries).
 * A request claims its key with one insert that only one instance can win; the winner runs the
 * call and renews its claim's lease while it runs; the others are told 409 (running), 422
 * (another request, or an answer not kept), or get the kept answer. A claim whose lease lapsed
 * (its instance died, or lost the database for a whole lease) is taken over only when its
 * request has neither an open hold nor a charge: then nothing can still bill it, and running it
 * again bills it once. Charged without a kept answer, the key is `unkept` (422): never a
 * second charge for one key.
 */
export class IdempotentCalls {
  /** The claims this process runs, by request id: their leases are renewed. */
  private readonly live = new Map<string, CallIdentity>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly options: IdempotentCallsOptions,
  ) {}

  /** Renews live claims and deletes expired rows every quarter lease (at most 15 s). */
  start(): void {
    this.timer ??= setInterval(() => void this.tick(), Math.min(15_000, this.options.leaseMs / 4))
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** One renewal and one sweep; a failure is logged and the next tick tries again. */
  async tick(): Promise<void> {
    try {
      await this.renew()
      await this.sweep()
    } catch (error) {
      logEvent('error', 'idempotency key upkeep failed', { error: describeDatabaseError(error) })
    }
  }

  /** Pushes the lease of every claim this process still runs. */
  async renew(): Promise<void> {
    const ids = [...this.live.keys()]
    if (ids.length === 0) return
    const lease = this.options.now() + this.options.leaseMs
    await this.database.rows(sql`
      update idempotent_calls set lease_until = ${iso(lease)}::timestamptz, expires_at = ${iso(lease + KEPT_FOR_MS)}::timestamptz
      where state = 'running' and owner = ${this.options.instanceId}
        and request_id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::text::jsonb))`)
  }

  /** Deletes expired rows page by page; returns how many. */
  async sweep(): Promise<number> {
    let total = 0
    for (;;) {
      const deleted = await this.database.rows<{ key: string }>(sql`
        delete from idempotent_calls where ctid in (
          select ctid from idempotent_calls where expires_at < ${iso(this.options.now())}::timestamptz limit ${SWEEP_PAGE})
        returning key`)
      total += deleted.length
      if (deleted.length < SWEEP_PAGE) return total
    }
  }

  /**
   * Claims the key for this request, or says what the key already holds. Throws 409
   * idempotency_key_in_use while another request runs the call, 422 idempotency_key_reused for a
   * different request or an answer not kept.
   */
  async claim(identity: CallIdentity, fingerprint: string, requestId: string): Promise<ClaimOutcome> {
    // A row can vanish (freed, swept) or change between two statements: look again, a bounded number of times.
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.options.now()
      const lease = now + this.options.leaseMs
      const inserted = await this.database.rows<{ request_id: string }>(sql`
        insert into idempotent_calls (scope, path, key, fingerprint, state, request_id, owner, lease_until, expires_at)
        values (${identity.scope}, ${identity.path}, ${identity.key}, ${fingerprint}, 'running', ${requestId}, ${this.options.instanceId},
          ${iso(lease)}::timestamptz, ${iso(lease + KEPT_FOR_MS)}::timestamptz)
        on conflict do nothing
        returning request_id`)
      if (inserted.length > 0) return { kind: 'run', claim: this.claimed(identity, requestId) }
      const [row] = await this.database.rows<CallRow>(sql`
        select fingerprint, state, request_id, status, content_type, body,
          (extract(epoch from lease_until) * 1000)::float8 as lease_until, (extract(epoch from expires_at) * 1000)::float8 as expires_at
        from idempotent_calls where scope = ${identity.scope} and path = ${identity.path} and key = ${identity.key}`)
      if (!row) continue
      if (row.expires_at <= now) {
        await this.database.rows(sql`
          delete from idempotent_calls where scope = ${identity.scope} and path = ${identity.path} and key = ${identity.key}
            and request_id = ${row.request_id} and expires_at <= ${iso(now)}::timestamptz`)
        continue
      }
      if (row.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError('This Idempotency-Key was already used with a different request.')
      if (row.state === 'done') return { kind: 'replay', requestId: row.request_id, answer: keptAnswerOf(row) }
      if (row.state === 'unkept')
        throw new IdempotencyKeyReusedError('The call made with this Idempotency-Key ran, but its answer could not be kept for a replay; use a new key.')
      if (row.lease_until > now) throw inUse()
      if (await this.takeOver(identity, row.request_id, requestId, now)) return { kind: 'run', claim: this.claimed(identity, requestId) }
    }
    throw inUse()
  }

  /**
   * Takes over a running claim whose lease lapsed, when nothing can bill its request any more;
   * true when this request now runs the call. Its request charged (the answer was lost with its
   * instance): the key becomes `unkept` (422). Its hold still open: 409 until the sweep ends it.
   */
  private async takeOver(identity: CallIdentity, lapsedRequestId: string, requestId: string, now: number): Promise<boolean> {
    const [traces] = await this.database.rows<{ held: boolean; charged: boolean }>(sql`
      select exists (select 1 from holds where request_id = ${lapsedRequestId}) as held,
        exists (select 1 from ledger_entries where request_id = ${lapsedRequestId} and kind = 'charge') as charged`)
    if (traces?.charged) {
      await this.database.rows(sql`
        update idempotent_calls set state = 'unkept', expires_at = ${iso(now + KEPT_FOR_MS)}::timestamptz
        where scope = ${identity.scope} and path = ${identity.path} and key = ${identity.key}
          and request_id = ${lapsedRequestId} and state = 'running'`)
      throw new IdempotencyKeyReusedError('The call made with this Idempotency-Key was billed, but its answer was lost; use a new key.')
    }
    if (traces?.held) throw inUse()
    const lease = now + this.options.leaseMs
    const taken = await this.database.rows<{ request_id: string }>(sql`
      update idempotent_calls set request_id = ${requestId}, owner = ${this.options.instanceId},
        lease_until = ${iso(lease)}::timestamptz, expires_at = ${iso(lease + KEPT_FOR_MS)}::timestamptz
      where scope = ${identity.scope} and path = ${identity.path} and key = ${identity.key}
        and request_id = ${lapsedRequestId} and state = 'running' and lease_until <= ${iso(now)}::timestamptz
      returning request_id`)
    if (taken.length > 0) logEvent('warn', 'idempotent call taken over after its lease lapsed', { request_id: requestId, lapsed_request_id: lapsedRequestId })
    return taken.length > 0
  }

  private claimed(identity: CallIdentity, requestId: string): Claim {
    this.live.set(requestId, identity)
    return new Claim(this, identity, requestId)
  }

  /** Ends a claim: its answer kept (`done`), not kept (`unkept`), or the key freed (deleted). */
  async close(identity: CallIdentity, requestId: string, outcome: KeptAnswer | 'unkept' | 'free'): Promise<void> {
    const where = sql`scope = ${identity.scope} and path = ${identity.path} and key = ${identity.key} and request_id = ${requestId} and state = 'running'`
    try {
      await retried(async () => {
        if (outcome === 'free') return this.database.rows(sql`delete from idempotent_calls where ${where}`)
        const expiresAt = iso(this.options.now() + KEPT_FOR_MS)
        if (outcome === 'unkept')
          return this.database.rows(sql`update idempotent_calls set state = 'unkept', expires_at = ${expiresAt}::timestamptz where ${where}`)
        return this.database.rows(sql`
          update idempotent_calls set state = 'done', status = ${outcome.status}, content_type = ${outcome.contentType},
            body = ${Buffer.from(outcome.body.buffer, outcome.body.byteOffset, outcome.body.byteLength)}, expires_at = ${expiresAt}::timestamptz
          where ${where}`)
      })
    } catch (error) {
      // Left running: its lease lapses, and the next retry finds the charge (422) or none (it runs).
      logEvent('error', 'idempotency key could not be closed', { request_id: requestId, error: describeDatabaseError(error) })
    } finally {
      this.live.delete(requestId)
    }
  }
}

/** The right to run one idempotent call; closed exactly once. */
export class Claim {
  private closed = false

  constructor(
    private readonly calls: IdempotentCalls,
    private readonly identity: CallIdentity,
    readonly requestId: string,
  ) {}

  /** The call answered 2xx: its answer is kept for replays, or, too large or incomplete, not (`unkept`). */
  keep(answer: KeptAnswer | 'unkept'): Promise<void> {
    return this.close(answer)
  }

  /** The call ended without a 2xx answer: the key is free for a retry that runs for real. */
  free(): Promise<void> {
    return this.close('free')
  }

  private async close(outcome: KeptAnswer | 'unkept' | 'free'): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.calls.close(this.identity, this.requestId, outcome)
  }
}

function inUse(): IdempotencyKeyInUseError {
  return new IdempotencyKeyInUseError(
    'A request with this Idempotency-Key is still running; retry after it ends to get its answer.',
    IN_USE_RETRY_AFTER_SECONDS,
  )
}

function keptAnswerOf(row: CallRow): KeptAnswer {
  return { status: row.status ?? 200, contentType: row.content_type, body: row.body ?? new Uint8Array() }
}

async function retried<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write()
    } catch (error) {
      if (attempt >= WRITE_ATTEMPTS) throw error
      await Bun.sleep(100 * 2 ** (attempt - 1))
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}
