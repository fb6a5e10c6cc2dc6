import type { StreamSource } from '../../src/dispatch/stream-sources'

/** What a stream source fed, as a relay takes it: every item in order, then how it stopped. */
export interface Drained<Item> {
  items: Item[]
  /** Why the source failed; undefined when it ended. */
  failure?: unknown
}

/** Starts `source` on a sink that takes everything (a client that always keeps up) and waits for its end or failure. */
export function drainSource<Item>(source: StreamSource<Item>): Promise<Drained<Item>> {
  return new Promise((resolve) => {
    const items: Item[] = []
    source.start({
      items: (batch) => {
        items.push(...batch)
        return undefined
      },
      // Every event is read as an item, as a relay whose observer takes no bytes.
      eventBytes: () => false,
      end: () => resolve({ items }),
      fail: (failure) => resolve({ items, failure }),
    })
  })
}
