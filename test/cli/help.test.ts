import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { WORKER_ENV } from '../../src/lifecycle/worker-messages'

/**
 * `tollgate --help` as an operator reads it: every command, every flag, and every environment
 * variable the gateway reads, with its default. The list is read off the source here, so a
 * variable added anywhere in src/ without a line in the help fails this test.
 */

const MAIN = resolve('src/main.ts')

function run(args: string[]): { code: number; stdout: string; stderr: string } {
  const result = Bun.spawnSync(['bun', MAIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } })
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return entry.name === 'web' ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/**
 * Every environment variable the source reads: `process.env.X`, `env.X`, `vars.X`, `env['X']`,
 * the schema's keys (`X: Type.Optional(`) and the credentials a catalogue names
 * (`apiKeyEnv: 'X'`, `accessTokenEnv: 'X'`).
 */
function variablesReadBySource(): Set<string> {
  const found = new Set<string>()
  const patterns = [
    /\b(?:process\.env|Bun\.env|env|vars)\.([A-Z][A-Z0-9_]{2,})\b/g,
    /\b(?:process\.env|env|vars)\[['"]([A-Z][A-Z0-9_]{2,})['"]\]/g,
    /\b(?:apiKeyEnv|accessTokenEnv):\s*['"]([A-Z][A-Z0-9_]{2,})['"]/g,
    /^\s{2}([A-Z][A-Z0-9_]{2,}): Type\.Optional\(/gm,
  ]
  for (const file of sourceFiles(resolve('src'))) {
    const text = readFileSync(file, 'utf8')
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.add(match[1] ?? '')
  }
  // Set by the primary of `serve --workers N` for its own workers, never by an operator.
  found.delete(WORKER_ENV)
  return found
}

describe('tollgate --help', () => {
  const help = run(['--help'])

  test('lists the commands and their flags, and exits 0', () => {
    expect(help.code).toBe(0)
    for (const text of ['tollgate [serve]', 'tollgate demo', 'tollgate migrate', 'tollgate admin <command>', '--port N', '--host H', '--workers N']) {
      expect(help.stdout).toContain(text)
    }
    // The admin commands follow.
    expect(help.stdout).toContain('tollgate admin keys create')
    expect(run(['help']).stdout).toBe(help.stdout)
  })

  test('lists every environment variable the source reads, each with its default', () => {
    const variables = variablesReadBySource()
    // The scan itself finds the known ones: a pattern that stopped matching would pass vacuously.
    for (const known of ['PORT', 'DATABASE_URL', 'TOLLGATE_DB_WAIT_SECONDS', 'OPENAI_API_KEY', 'VERTEX_PROJECT', 'HTTPS_PROXY', 'TOLLGATE_LOG_LEVEL']) {
      expect(variables.has(known)).toBe(true)
    }
    expect(variables.size).toBeGreaterThanOrEqual(45)
    const lines = help.stdout.split('\n')
    for (const variable of variables) {
      const line = lines.find((candidate) => candidate.trimStart().startsWith(`${variable} `))
      expect({ variable, listed: line !== undefined, withDefault: /\(default: [^)]+\)$/.test(line ?? '') }).toEqual({
        variable,
        listed: true,
        withDefault: true,
      })
    }
  })

  test('every variable the help lists is in docs/configuration.md', () => {
    const docs = readFileSync(resolve('docs/configuration.md'), 'utf8')
    const listed = [...help.stdout.matchAll(/^ {4}([A-Z][A-Z0-9_]+) {2,}/gm)].map((match) => match[1] ?? '')
    expect(listed.length).toBeGreaterThanOrEqual(45)
    for (const variable of listed) expect({ variable, documented: docs.includes(`\`${variable}\``) }).toEqual({ variable, documented: true })
  })

  test('a mistake on the command line is named, with the way to --help, and exits 2', () => {
    const unknown = run(['--prot', '9000'])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr).toBe(
      'error: unknown argument "--prot" for tollgate serve; it takes --port, --host, --workers\nrun `tollgate --help` for the commands, flags and environment variables\n',
    )
    expect(run(['serve', '--port', '70000']).stderr).toStartWith('error: --port must be a whole number from 0 to 65535 (got "70000")')
    expect(run(['deploy']).stderr).toStartWith('error: unknown command "deploy"')
    const admin = run(['admin', 'keys', 'frobnicate'])
    expect(admin.code).toBe(2)
    expect(admin.stdout).toStartWith('error: unknown admin command "keys frobnicate"\n')
  })
})
