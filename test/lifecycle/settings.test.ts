import { describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/config'
import { ConfigError } from '../../src/config/config-error'

describe('drain settings', () => {
  test('default to a 5 s drain and a 60 s deadline; fractions of a second are taken', () => {
    expect(loadConfig({})).toMatchObject({ drainMs: 5000, shutdownTimeoutMs: 60_000 })
    expect(loadConfig({ TOLLGATE_DRAIN_SECONDS: '0.25', TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: '0' })).toMatchObject({ drainMs: 250, shutdownTimeoutMs: 0 })
  })

  test('a value that is not a number of seconds stops the start, naming the variable', () => {
    expect(() => loadConfig({ TOLLGATE_DRAIN_SECONDS: 'soon' })).toThrow(ConfigError)
    expect(() => loadConfig({ TOLLGATE_DRAIN_SECONDS: 'soon' })).toThrow(/TOLLGATE_DRAIN_SECONDS/)
    expect(() => loadConfig({ TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: '-1' })).toThrow(/TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS/)
  })
})
