import { describe, expect, test } from 'bun:test'
import { Batcher } from '../../src/billing/batcher'

describe('group commit', () => {
  test('without a gathering time, an idle batcher writes the first item at once and what comes meanwhile together', async () => {
    const batches: number[][] = []
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items)
        await Bun.sleep(10)
        return items.map((item) => item * 2)
      },
      500,
      1,
    )
    const results = await Promise.all([1, 2, 3].map((item) => batcher.submit(item)))
    expect(results).toEqual([2, 4, 6])
    expect(batches).toEqual([[1], [2, 3]])
  })

  test('with a gathering time, items submitted within it are written in one batch, each with its own outcome', async () => {
    const batches: number[][] = []
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items)
        return items.map((item) => (item === 2 ? new Error('refused') : item * 2))
      },
      500,
      2,
      20,
    )
    const submitted = [1, 2, 3].map((item) => batcher.submit(item).catch((error: Error) => error.message))
    await Bun.sleep(5)
    submitted.push(batcher.submit(4).catch((error: Error) => error.message))
    expect(await Promise.all(submitted)).toEqual([2, 'refused', 6, 8])
    expect(batches).toEqual([[1, 2, 3, 4]])
  })
})
