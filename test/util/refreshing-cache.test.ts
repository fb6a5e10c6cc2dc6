import { describe, expect, test } from 'bun:test'
import { RefreshingCache } from '../../src/util/refreshing-cache'

describe('a cache read again in the background while in use', () => {
  let now = 0
  const cache = (permanent?: (value: string | undefined) => boolean) =>
    new RefreshingCache<string | undefined>({ ttlMs: 5000, refreshAfterMs: 3000, maxEntries: 3, now: () => now, permanent })

  test('serves an entry until its age passes the TTL, and starts one read in the background after refreshAfterMs', async () => {
    now = 0
    const values = cache()
    let reads = 0
    const read = async () => `v${++reads}`
    expect(await values.get('k', read)).toBe('v1')
    now = 2999
    expect(await values.get('k', read)).toBe('v1')
    expect(reads).toBe(1)
    now = 3000
    // Still the cached value; one background read, not one per call.
    expect(await Promise.all([values.get('k', read), values.get('k', read)])).toEqual(['v1', 'v1'])
    expect(reads).toBe(2)
    await Bun.sleep(0)
    expect(await values.get('k', read)).toBe('v2')
    // The refreshed entry counts its age from its own read.
    now = 7999
    expect(await values.get('k', read)).toBe('v2')
  })

  test('a failed background read leaves the entry to lapse; after the TTL the caller reads (and fails) itself', async () => {
    now = 0
    const values = cache()
    expect(await values.get('k', async () => 'v1')).toBe('v1')
    now = 4000
    expect(await values.get('k', async () => Promise.reject(new Error('down')))).toBe('v1')
    await Bun.sleep(0)
    now = 5000
    await expect(values.get('k', async () => Promise.reject(new Error('down')))).rejects.toThrow('down')
  })

  test('a value found forgotten while its read was under way is not kept; permanent values never lapse', async () => {
    now = 0
    const values = cache((value) => value === 'forever')
    let release: (value: string) => void = () => {}
    const pending = values.get('k', () => new Promise<string>((resolve) => (release = resolve)))
    values.forget((value) => value === 'old')
    release('old')
    expect(await pending).toBe('old')
    expect(await values.get('k', async () => 'new')).toBe('new')
    expect(await values.get('p', async () => 'forever')).toBe('forever')
    now = 1_000_000
    expect(await values.get('p', async () => 'changed')).toBe('forever')
  })
  test('calls that miss while a read of their key is under way share it: one query for a burst; a failed read fails them all and the next call reads again', async () => {
    now = 0
    const values = cache()
    let reads = 0
    let answer: (value: string) => void = () => {}
    const slow = () => {
      reads++
      return new Promise<string>((resolve) => {
        answer = resolve
      })
    }
    const burst = Promise.all(Array.from({ length: 50 }, () => values.get('k', slow)))
    expect(reads).toBe(1)
    answer('v1')
    expect(new Set(await burst)).toEqual(new Set(['v1']))
    // Past the TTL, the calls of a new burst share one read again, and one that fails fails them all.
    now = 6000
    let fail: (error: Error) => void = () => {}
    const failing = () => {
      reads++
      return new Promise<string>((_, reject) => {
        fail = reject
      })
    }
    const failed = Promise.allSettled([values.get('k', failing), values.get('k', failing)])
    fail(new Error('down'))
    expect((await failed).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected'])
    expect(reads).toBe(2)
    expect(await values.get('k', async () => `v${++reads}`)).toBe('v3')
  })

  test('a call after a forget does not join a read that began before it', async () => {
    now = 0
    const values = cache()
    let answer: (value: string) => void = () => {}
    const before = values.get('k', () => new Promise<string>((resolve) => (answer = resolve)))
    values.forget(() => true)
    const after = values.get('k', async () => 'after the forget')
    answer('before the forget')
    expect(await before).toBe('before the forget')
    expect(await after).toBe('after the forget')
    expect(await values.get('k', async () => 'a third read')).toBe('after the forget')
  })

  test('a read that has waited 250 ms or more is not joined: a call after an outage reads again rather than inherit a stuck read', async () => {
    now = 0
    const values = cache()
    const stuck = values.get('k', () => new Promise<string>(() => {}))
    now = 249
    let reads = 0
    const joined = values.get('k', async () => `read ${++reads}`)
    // Still young: joined, no read of its own.
    expect(reads).toBe(0)
    now = 250
    expect(await values.get('k', async () => `read ${++reads}`)).toBe('read 1')
    expect(reads).toBe(1)
    void stuck
    void joined
  })
})
