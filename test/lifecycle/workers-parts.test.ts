import { describe, expect, test } from 'bun:test'
import { IpcHitCounter } from '../../src/auth/ipc-hit-counter'
import { CounterUnavailableError } from '../../src/auth/rate-limit'
import { ConfigError } from '../../src/config/config-error'
import { workerCount } from '../../src/config/workers'
import { exactSum, mergeExpositions } from '../../src/observability/metrics-merge'

/** The parts of `serve --workers N` that need no process: the setting, the metrics merge, the shared counter. */
describe('the workers setting', () => {
  test('defaults to one process, on Postgres and on the embedded database alike', () => {
    expect(workerCount(undefined, 'TOLLGATE_WORKERS', undefined)).toBe(1)
    expect(workerCount(undefined, 'TOLLGATE_WORKERS', 'postgres://db/x')).toBe(1)
    expect(workerCount('1', 'TOLLGATE_WORKERS', undefined)).toBe(1)
    expect(workerCount('256', '--workers', 'postgres://db/x')).toBe(256)
  })

  test('refuses several workers on the embedded database and counts that are not whole numbers from 1 to 256', () => {
    expect(() => workerCount('2', 'TOLLGATE_WORKERS', undefined)).toThrow(ConfigError)
    for (const value of ['0', '257', '1.5', 'x', '', '-2', '00002x'])
      expect(() => workerCount(value, '--workers', 'postgres://db/x')).toThrow('--workers must be')
  })
})

describe('merging the workers metrics', () => {
  const worker = (requests: number, credits: string, lag: string, extra = '') =>
    [
      '# HELP tollgate_requests_total Requests.',
      '# TYPE tollgate_requests_total counter',
      `tollgate_requests_total{route="/v1/chat/completions",model="m",status="200"} ${requests}`,
      extra,
      '# HELP tollgate_credits_charged_total Credits.',
      '# TYPE tollgate_credits_charged_total counter',
      `tollgate_credits_charged_total{model="m"} ${credits}`,
      '# HELP tollgate_event_loop_lag_seconds Lag.',
      '# TYPE tollgate_event_loop_lag_seconds gauge',
      `tollgate_event_loop_lag_seconds ${lag}`,
      '',
    ]
      .filter((line, index, lines) => line !== '' || index === lines.length - 1)
      .join('\n')

  test('adds series up (credits exactly), keeps the worst lag, and keeps series only one worker has', () => {
    const merged = mergeExpositions([
      worker(3, '0.1', '0.002'),
      worker(4, '0.2', '0.005', 'tollgate_requests_total{route="/v1/models",model="none",status="200"} 1'),
    ])
    expect(merged).toBe(
      [
        '# HELP tollgate_requests_total Requests.',
        '# TYPE tollgate_requests_total counter',
        'tollgate_requests_total{route="/v1/chat/completions",model="m",status="200"} 7',
        'tollgate_requests_total{route="/v1/models",model="none",status="200"} 1',
        '# HELP tollgate_credits_charged_total Credits.',
        '# TYPE tollgate_credits_charged_total counter',
        'tollgate_credits_charged_total{model="m"} 0.3',
        '# HELP tollgate_event_loop_lag_seconds Lag.',
        '# TYPE tollgate_event_loop_lag_seconds gauge',
        'tollgate_event_loop_lag_seconds 0.005',
        '',
      ].join('\n'),
    )
  })

  test('decimal sums are exact where floating point is not', () => {
    expect(exactSum(['0.1', '0.2'])).toBe('0.3')
    expect(exactSum(['0.000001', '12.5', '3'])).toBe('15.500001')
    expect(exactSum(['-1.5', '0.25'])).toBe('-1.25')
    expect(exactSum(['1e-7', '1'])).toBe(String(1e-7 + 1))
  })
})

describe('the rate-limit counter kept by the primary', () => {
  test('answers with what the primary counted, and passes (once logged) while it does not answer', async () => {
    let answering = true
    const logged: string[] = []
    const counter = new IpcHitCounter(
      { counter: async (op, _name, amount) => (answering ? (op === 'add' ? amount + 10 : 10) : undefined) },
      50,
      (_level, message) => logged.push(message),
    )
    expect(await counter.add('k', 2, 1000)).toBe(12)
    answering = false
    await expect(counter.read('k')).rejects.toBeInstanceOf(CounterUnavailableError)
    await expect(counter.read('k')).rejects.toBeInstanceOf(CounterUnavailableError)
    answering = true
    expect(await counter.read('k')).toBe(10)
    expect(logged).toHaveLength(2)
  })
})
