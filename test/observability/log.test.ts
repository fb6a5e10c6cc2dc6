import { afterAll, afterEach, expect, spyOn, test } from 'bun:test'
import { logEvent } from '../../src/observability/log'

const lines: string[] = []
const spy = spyOn(console, 'error').mockImplementation((line: unknown) => lines.push(String(line)))
afterEach(() => {
  lines.length = 0
})
afterAll(() => spy.mockRestore())

test('an event is one JSON line, scrubbed of credentials', () => {
  logEvent('warn', 'upstream said', { detail: 'Incorrect API key provided: sk-upstream-a', amount: 12n })
  expect(lines).toHaveLength(1)
  const event = JSON.parse(lines[0]!)
  expect(event).toMatchObject({ level: 'warn', message: 'upstream said', detail: 'Incorrect API key provided: [redacted]', amount: '12' })
})

test('an oversized event is cut to a line that still parses', () => {
  logEvent('error', 'big', { detail: 'x'.repeat(100_000) })
  expect(lines[0]!.length).toBeLessThanOrEqual(4096)
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', message: 'big', truncated: true })
})
