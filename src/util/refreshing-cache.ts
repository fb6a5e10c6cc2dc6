export interface RefreshingCacheOptions<Value> {
  /** An entry is served for this long after its read began, never longer. */
  ttlMs: number
  /** An entry used this long after its read began is read again in the background. */
  refreshAfterMs: number
  /** Past this many entries the cache starts over (a bound, not an eviction policy). */
  maxEntries: number
  now: () => number
  /** A value that never changes once found (a wallet id), kept without expiry. */
  permanent?: (value: Value) => boolean
}

/** How long after it began a read is shared with calls that miss (ms): a burst's calls come within it. */
const JOIN_WITHIN_MS = 250

interface Entry<Value> {
  value: Value
  readAt: number
  refreshing: boolean
}

/**
 * Lookups remembered for a short while, read again in the background while still in use: a busy
 * key's calls never wait for the database, yet what they see is never older than `ttlMs` (an
 * entry's age counts from when its read began). A read that fails in the background leaves the
 * entry to lapse; the next call after that reads, and fails, itself.
 *
 * One read per key at a time while it is young: calls that find no entry while a read of their
 * key began less than JOIN_WITHIN_MS ago wait for that read, so a burst of a new key's calls
 * (thousands opened within a second) costs the database a few queries rather than one each,
 * which would queue past the statement deadline.
 */
export class RefreshingCache<Value> {
  private readonly entries = new Map<string, Entry<Value>>()
  /** The read under way for each key. */
  private readonly reading = new Map<string, { value: Promise<Value>; startedAt: number }>()
  /** Forgets so far: a read that began before one may hold what was forgotten and is not kept. */
  private forgets = 0

  constructor(private readonly options: RefreshingCacheOptions<Value>) {}

  async get(key: string, read: () => Promise<Value>): Promise<Value> {
    const entry = this.entries.get(key)
    if (entry) {
      if (this.options.permanent?.(entry.value)) return entry.value
      const age = this.options.now() - entry.readAt
      if (age < this.options.ttlMs) {
        if (age >= this.options.refreshAfterMs && !entry.refreshing && !this.reading.has(key)) {
          entry.refreshing = true
          this.load(key, read).catch(() => {
            entry.refreshing = false
          })
        }
        return entry.value
      }
    }
    // A read is joined only while it is young: one that has waited longer is likely stuck on a
    // database that went away (it fails at its deadline), and a call after the database came
    // back must not inherit that failure.
    const under = this.reading.get(key)
    if (under && this.options.now() - under.startedAt < JOIN_WITHIN_MS) return under.value
    return this.load(key, read)
  }

  /** Drops every entry whose value matches: the next call reads it again. */
  forget(matches: (value: Value) => boolean): void {
    this.forgets++
    // A read under way may hold what is forgotten: calls from now on read again.
    this.reading.clear()
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key)
  }

  private load(key: string, read: () => Promise<Value>): Promise<Value> {
    const readAt = this.options.now()
    const forgetsBefore = this.forgets
    const reading = read().then((value) => {
      if (forgetsBefore !== this.forgets) return value
      if (this.entries.size >= this.options.maxEntries && !this.entries.has(key)) this.entries.clear()
      this.entries.set(key, { value, readAt, refreshing: false })
      return value
    })
    const entry = { value: reading, startedAt: readAt }
    this.reading.set(key, entry)
    const done = () => {
      if (this.reading.get(key) === entry) this.reading.delete(key)
    }
    reading.then(done, done)
    return reading
  }
}
