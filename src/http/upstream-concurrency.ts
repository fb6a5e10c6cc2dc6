import { dlopen, FFIType, type Pointer, ptr } from 'bun:ffi'

/**
 * Bun's `fetch` sends at most `BUN_CONFIG_MAX_HTTP_REQUESTS` requests at once (256 unless set)
 * and queues the rest, so a gateway relaying long streams would hold its 257th client waiting
 * for a slot while the upstream has nothing to do. Bun reads the variable once, when the runtime
 * starts: setting `process.env` afterwards changes nothing (measured: still 256). So when the
 * variable does not already say what the operator wants, the process replaces itself with the
 * same command and the variable set, through `execve(2)`. Replacing rather than spawning a child
 * keeps the process id, so supervisors, `kill -9` and exit codes see one process, as before.
 */

/** Bun's own ceiling for the variable (https://bun.sh/docs/runtime/networking/fetch). */
export const MAX_FETCH_CONCURRENCY = 65_535

const BUN_VARIABLE = 'BUN_CONFIG_MAX_HTTP_REQUESTS'

export type ConcurrencyOutcome = { kind: 'already-set' } | { kind: 'unavailable'; reason: string }

/**
 * Makes `fetch` able to run `wanted` requests at once. Returns when the variable is already in
 * effect; otherwise re-executes the process (and does not return) or, where that cannot be done,
 * says why so the caller can warn.
 */
export function ensureUpstreamConcurrency(wanted: number, env: Record<string, string | undefined> = process.env): ConcurrencyOutcome {
  if (env[BUN_VARIABLE] === String(wanted)) return { kind: 'already-set' }
  if (process.platform === 'win32') return { kind: 'unavailable', reason: 'no execve on Windows' }
  const execve = loadExecve()
  if (typeof execve === 'string') return { kind: 'unavailable', reason: execve }
  const variables = Object.entries({ ...env, [BUN_VARIABLE]: String(wanted) }).flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`]))
  const program = cString(process.execPath)
  const argumentTable = pointerTable(currentCommand())
  const environmentTable = pointerTable(variables)
  // Only returns on failure; the tables stay referenced until then, so their memory stays put.
  const result = execve(ptr(program), ptr(argumentTable.table), ptr(environmentTable.table))
  return { kind: 'unavailable', reason: `execve failed (${result}) for ${process.execPath}` }
}

/**
 * The command line that started this process. A compiled binary's script lives in Bun's
 * embedded file system (`/$bunfs/…`) and is run by the binary itself, so only the user's
 * arguments follow; `bun [flags] main.ts …` needs its flags and script repeated.
 */
function currentCommand(): string[] {
  const compiled = Bun.main.startsWith('/$bunfs/')
  return compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
}

type Execve = (path: Pointer, argv: Pointer, envp: Pointer) => number

function loadExecve(): Execve | string {
  const candidates = process.platform === 'darwin' ? ['libSystem.B.dylib'] : ['libc.so.6', 'libc.so']
  const failures: string[] = []
  for (const name of candidates) {
    try {
      const library = dlopen(name, { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } })
      return (path, argv, envp) => library.symbols.execve(path, argv, envp)
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return `cannot load the C library (${failures.join('; ')})`
}

function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`)
}

/** A NULL-terminated array of pointers to C strings, as execve takes; `strings` keeps them alive. */
function pointerTable(items: string[]): { table: BigUint64Array; strings: Buffer[] } {
  const strings = items.map(cString)
  const table = new BigUint64Array(items.length + 1)
  strings.forEach((text, index) => (table[index] = BigInt(ptr(text))))
  return { table, strings }
}
