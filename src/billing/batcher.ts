import { isTransientDatabaseError } from '../db/errors'

/**
 * Group commit: callers submit one item each; whatever accumulates while earlier batches are
 * being written goes into the next batch, one statement or transaction for all of it. An idle
 * gateway writes a lone item at once, a busy one amortises a commit over many. Up to
 * `maxInFlight` batches are written at a time, so the database is never left idle waiting for
 * the gateway to assemble the next one.
 *
 * Batching must never let one caller's item fail another's: when a batch fails for a reason
 * the statement itself caused (a value the database refused), its items are written again one
 * by one, so each gets its own outcome. When the database could not be reached, every item
 * gets that error at once (retrying them singly would only wait on the same outage N times).
 */
export class Batcher<Item, Result> {
  private queue: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = []
  private inFlight = 0
  private gathering: ReturnType<typeof setTimeout> | undefined

  constructor(
    /** Writes one batch; returns one outcome per item, in order. An Error outcome fails just that item. */
    private readonly write: (items: Item[]) => Promise<(Result | Error)[]>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 2,
    /**
     * For writes nobody waits on (charges answered before they land): how long an item waits
     * for others before a batch is written, so a database that runs one statement at a time
     * (the embedded one) writes many per statement rather than one each. 0: at once.
     */
    private readonly gatherMs = 0,
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject })
      if (this.inFlight >= this.maxInFlight) return
      if (this.gatherMs === 0) void this.drain()
      else
        this.gathering ??= setTimeout(() => {
          this.gathering = undefined
          void this.drain()
        }, this.gatherMs)
    })
  }

  private async drain(): Promise<void> {
    this.inFlight++
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch)
        try {
          settle(batch, await this.write(batch.map((entry) => entry.item)))
        } catch (error) {
          if (batch.length === 1 || isTransientDatabaseError(error)) {
            for (const entry of batch) entry.reject(error)
            continue
          }
          for (const entry of batch) {
            try {
              settle([entry], await this.write([entry.item]))
            } catch (alone) {
              entry.reject(alone)
            }
          }
        }
      }
    } finally {
      this.inFlight--
    }
  }
}

function settle<Result>(entries: { resolve: (result: Result) => void; reject: (error: unknown) => void }[], outcomes: (Result | Error)[]): void {
  entries.forEach((entry, index) => {
    const outcome = outcomes[index]
    if (outcome instanceof Error) entry.reject(outcome)
    else entry.resolve(outcome as Result)
  })
}
