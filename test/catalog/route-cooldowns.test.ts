import { afterEach, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { type CooledRoute, RouteCooldowns } from '../../src/catalog/route-cooldowns'

const route = (provider: string, upstreamModel: string, cooldownSeconds = 30): CooledRoute => ({ provider: { name: provider, cooldownSeconds }, upstreamModel })
const unavailable = { kind: 'status', status: 503 } as const

/** The cooldown state alone, on a clock the test sets (the gateway's tests are in route-cooldown.test.ts). */
describe('RouteCooldowns', () => {
  let clock = 0
  let cooldowns = new RouteCooldowns(() => clock)
  let spy: ReturnType<typeof spyOn> | undefined
  beforeEach(() => {
    clock = 1_000_000
    cooldowns = new RouteCooldowns(() => clock)
    spy = spyOn(console, 'error').mockImplementation(() => undefined)
  })
  afterEach(() => {
    cooldowns.close()
    spy?.mockRestore()
  })
  const cool = (...routes: CooledRoute[]) => {
    for (const each of routes) for (let failure = 0; failure < 3; failure++) cooldowns.failed(each, unavailable)
  }

  test('a reload forgets the routes its catalogue no longer has, cooling or counting', () => {
    const kept = route('a', 'one')
    const gone = route('b', 'two')
    const counting = route('c', 'three')
    cool(kept, gone)
    cooldowns.failed(counting, unavailable)
    cooldowns.failed(counting, unavailable)
    expect(cooldowns.coolingCount()).toBe(2)
    cooldowns.retain([{ provider: 'a', model: 'one' }])
    expect(cooldowns.coolingCount()).toBe(1)
    // The counting route starts again from nothing: one more failure does not cool it.
    cooldowns.failed(counting, unavailable)
    expect(cooldowns.coolingCount()).toBe(1)
    expect(cooldowns.usable([gone, kept])).toEqual([gone])
  })

  test('routes are skipped only while another remains, and in their order', () => {
    const [first, second, third] = [route('a', 'x'), route('b', 'x'), route('a', 'y')]
    cool(first)
    expect(cooldowns.usable([first, second, third])).toEqual([second, third])
    cool(second, third)
    expect(cooldowns.usable([first, second, third])).toEqual([first, second, third])
    clock += 30_000
    expect(cooldowns.usable([first, second, third])).toEqual([first, second, third])
    expect(cooldowns.coolingCount()).toBe(0)
  })

  test('a failure while cooling prolongs the cooldown; 401-like answers and client faults do not count', () => {
    const only = route('a', 'x')
    const other = route('b', 'x')
    cool(only)
    clock += 20_000
    cooldowns.failed(only, { kind: 'timeout' })
    clock += 20_000
    expect(cooldowns.usable([only, other])).toEqual([other])
    clock += 10_001
    expect(cooldowns.usable([only, other])).toEqual([only, other])
    for (const status of [400, 401, 403, 404, 422]) cooldowns.answered(other, status, new Headers())
    cooldowns.answered(other, 408, new Headers())
    cooldowns.answered(other, 529, new Headers())
    expect(cooldowns.usable([only, other])).toEqual([only, other])
    cooldowns.answered(other, 500, new Headers())
    expect(cooldowns.usable([only, other])).toEqual([only])
  })
})
