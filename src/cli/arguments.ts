/**
 * The command line (docs/operations.md#commands): a command, then its flags. `serve` is the
 * default, so `tollgate --port 9000` serves. Flags beat the environment variables they stand
 * for; a value out of bounds, a flag the command does not take and a stray word are refused by
 * name before anything starts.
 */

export type Command = 'serve' | 'demo' | 'migrate' | 'admin' | 'help' | 'version'

export interface Invocation {
  command: Command
  /** `--port`: 0 to 65535 (0: any free port). */
  port?: number
  /** `--host`: the listen address. */
  host?: string
  /** `--workers`, as given: workerCount checks it against the database (config/workers.ts). */
  workers?: string
  /** `admin`'s own words and flags, for the admin CLI. */
  adminArgs: string[]
}

/** A command line that cannot run: exit 2 with this message and a pointer to --help. */
export class UsageError extends Error {}

const HELP = new Set(['help', '--help', '-h'])
const VERSION = new Set(['version', '--version', '-v'])

/** The flags each serving command takes; the others take none (admin's are its operations'). */
const FLAGS_OF: Partial<Record<Command, readonly string[]>> = {
  serve: ['--port', '--host', '--workers'],
  demo: ['--port', '--host'],
  migrate: [],
}

/** A host name or an IP address (IPv6 in brackets or bare, with a zone): no spaces, no scheme, no path. */
const HOST_PATTERN = /^[A-Za-z0-9.:[\]%_-]{1,253}$/

export function parseArguments(args: readonly string[]): Invocation {
  const [first, ...others] = args
  if (first !== undefined && HELP.has(first)) return { command: 'help', adminArgs: [] }
  if (first !== undefined && VERSION.has(first)) return { command: 'version', adminArgs: [] }
  const explicit = first !== undefined && !first.startsWith('-')
  const command = explicit ? first : 'serve'
  if (!isCommand(command)) throw new UsageError(`unknown command "${shown(command)}"`)
  const rest = explicit ? others : [...args]
  if (command === 'admin') return { command, adminArgs: rest }
  const invocation: Invocation = { command, adminArgs: [] }
  const accepted = FLAGS_OF[command] ?? []
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] ?? ''
    if (HELP.has(arg)) return { command: 'help', adminArgs: [] }
    const equals = arg.indexOf('=')
    const name = arg.startsWith('--') && equals > 0 ? arg.slice(0, equals) : arg
    if (!accepted.includes(name)) {
      const takes = accepted.length > 0 ? `; it takes ${accepted.join(', ')}` : '; it takes no arguments'
      throw new UsageError(`unknown argument "${shown(arg)}" for tollgate ${command}${takes}`)
    }
    const value = equals > 0 && arg.startsWith('--') ? arg.slice(equals + 1) : rest[++index]
    if (value === undefined) throw new UsageError(`${name} needs a value`)
    if (name === '--port') invocation.port = portOf(value)
    else if (name === '--host') invocation.host = hostOf(value)
    else invocation.workers = value
  }
  return invocation
}

function isCommand(word: string): word is Command {
  return ['serve', 'demo', 'migrate', 'admin'].includes(word)
}

function portOf(value: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535 (got "${shown(value)}")`)
  return Number(value)
}

function hostOf(value: string): string {
  if (!HOST_PATTERN.test(value)) throw new UsageError(`--host must be a host name or an IP address such as 0.0.0.0 or ::1 (got "${shown(value)}")`)
  return value
}

/** An argument as a message quotes it: short, one line. */
function shown(arg: string): string {
  const oneLine = [...arg].map((character) => (character < ' ' || character === '\u007f' ? '?' : character)).join('')
  return oneLine.length > 60 ? `${oneLine.slice(0, 60)}…` : oneLine
}
