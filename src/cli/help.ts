import { adminUsage } from '../admin/cli'
import { environmentVariables } from '../config/variables'

/** `tollgate --help`: the commands, their flags, then every environment variable with its default (config/variables.ts). */
export const USAGE = `usage: tollgate [serve] [--port N] [--host H] [--workers N]
                                 serve the gateway (the default command)
       tollgate demo [--port N] [--host H]
                                 serve a throwaway demo: a local echo provider and a funded key, no account needed
       tollgate migrate          apply database migrations and exit
       tollgate admin <command>  run an admin operation on the database (listed below)
       tollgate help | --help    this text
       tollgate version | --version

flags (they beat the environment variables they stand for):
  --port N      listen port, 0 to 65535 (0: any free port)          PORT
  --host H      listen address, such as 0.0.0.0 or ::1              HOST
  --workers N   processes sharing the port, 1 to 256 (serve only)   TOLLGATE_WORKERS`

export function helpText(): string {
  return [USAGE, '', environmentHelp(), '', `admin commands (docs/operations.md#admin-cli):`, adminUsage().replace(/^usage:\n/, '')].join('\n')
}

function environmentHelp(): string {
  const groups = environmentVariables()
  const width = Math.max(...groups.flatMap((group) => Object.keys(group.variables).map((name) => name.length)))
  const lines = ['environment variables (all optional; an empty one counts as unset; docs/configuration.md):']
  for (const group of groups) {
    lines.push(`  ${group.title}:`)
    for (const [name, help] of Object.entries(group.variables)) lines.push(`    ${name.padEnd(width)}  ${help.meaning} (default: ${help.default})`)
  }
  return lines.join('\n')
}
