/**
 * A small seeded generator (mulberry32): the fuzzer must make the same requests for the same
 * seed, on any machine, so a finding can be replayed from its seed and request index alone.
 */
export class Random {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** The generator of request `index` of run `seed`: each request can be rebuilt on its own. */
  static forRequest(seed: number, index: number): Random {
    // Mix the two so that neighbouring seeds and indexes do not give related streams.
    let mixed = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 0x632be5ab, 0xc2b2ae35)
    mixed ^= mixed >>> 16
    return new Random(mixed)
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let value = this.state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1))
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing')
    return items[Math.floor(this.next() * items.length)]!
  }
}
