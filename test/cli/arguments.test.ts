import { describe, expect, test } from 'bun:test'
import { parseArguments, UsageError } from '../../src/cli/arguments'

function refusal(args: string[]): string {
  try {
    parseArguments(args)
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    return (error as Error).message
  }
  throw new Error(`expected ${JSON.stringify(args)} to be refused`)
}

describe('the command line', () => {
  test('serve is the default command, so flags alone serve', () => {
    expect(parseArguments([])).toEqual({ command: 'serve', adminArgs: [] })
    expect(parseArguments(['--port', '9000'])).toEqual({ command: 'serve', port: 9000, adminArgs: [] })
    expect(parseArguments(['serve', '--port=0', '--host', '0.0.0.0', '--workers', '2'])).toEqual({
      command: 'serve',
      port: 0,
      host: '0.0.0.0',
      workers: '2',
      adminArgs: [],
    })
    expect(parseArguments(['demo', '--host=::1', '--port', '65535'])).toEqual({ command: 'demo', host: '::1', port: 65535, adminArgs: [] })
  })

  test('help and version, as words or flags, anywhere a serving command would read a flag', () => {
    for (const args of [['--help'], ['help'], ['-h'], ['serve', '--help'], ['--port', '9000', '--help'], ['demo', '-h']]) {
      expect(parseArguments(args).command).toBe('help')
    }
    for (const args of [['--version'], ['version'], ['-v']]) expect(parseArguments(args).command).toBe('version')
  })

  test("admin's words and flags go to the admin CLI untouched", () => {
    expect(parseArguments(['admin', 'keys', 'create', '--account-id', 'acct_1', '--port', 'x'])).toEqual({
      command: 'admin',
      adminArgs: ['keys', 'create', '--account-id', 'acct_1', '--port', 'x'],
    })
  })

  test('an unknown command, argument or flag is named, with what the command takes', () => {
    expect(refusal(['frobnicate'])).toBe('unknown command "frobnicate"')
    expect(refusal(['--prot', '9000'])).toBe('unknown argument "--prot" for tollgate serve; it takes --port, --host, --workers')
    expect(refusal(['serve', 'now'])).toBe('unknown argument "now" for tollgate serve; it takes --port, --host, --workers')
    expect(refusal(['demo', '--workers', '2'])).toBe('unknown argument "--workers" for tollgate demo; it takes --port, --host')
    expect(refusal(['migrate', '--port', '1'])).toBe('unknown argument "--port" for tollgate migrate; it takes no arguments')
    // What is quoted back is short and on one line, whatever was typed.
    expect(refusal(['serve', `--${'x'.repeat(500)}`])).toHaveLength(
      'unknown argument "'.length + 61 + '" for tollgate serve; it takes --port, --host, --workers'.length,
    )
    expect(refusal(['serve', 'a\nb'])).toContain('"a?b"')
  })

  test('port and host are bounded and checked; a flag without its value is named', () => {
    for (const port of ['65536', '-1', '80.5', 'http', '', '123456']) {
      expect(refusal(['--port', port])).toBe(`--port must be a whole number from 0 to 65535 (got "${port}")`)
    }
    for (const host of ['', 'http://example.com', 'two words', 'a/b', 'x'.repeat(254)]) {
      expect(refusal(['--host', host])).toStartWith('--host must be a host name or an IP address')
    }
    expect(parseArguments(['--host', 'gateway.internal']).host).toBe('gateway.internal')
    expect(parseArguments(['--host', '[::]']).host).toBe('[::]')
    expect(refusal(['--port'])).toBe('--port needs a value')
    expect(refusal(['serve', '--host'])).toBe('--host needs a value')
  })
})
