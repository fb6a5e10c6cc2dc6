import type { TObject } from '@sinclair/typebox'
import { GatewayError } from '../errors/gateway-error'
import type { Services } from '../services/services'
import { describeSchemaError, firstSchemaError } from '../util/schema-errors'
import { coerceText } from './coerce'
import { AdminExport } from './export'
import type { AdminFields, AdminInput, AdminOperation } from './operation'
import { ADMIN_OPERATIONS } from './operations'

/** `tollgate admin <words…> --flag value …`: the admin API's operations, run on the database directly. */
export async function runAdminCommand(
  args: string[],
  services: () => Promise<Services>,
  out: (text: string) => void,
  /** Where an export's text goes, as it is read (`tollgate admin ledger --format csv`). */
  write: (chunk: string) => void = (chunk) => process.stdout.write(chunk),
): Promise<number> {
  const firstFlag = args.findIndex((arg) => arg.startsWith('--'))
  const words = firstFlag < 0 ? args : args.slice(0, firstFlag)
  const flagArgs = firstFlag < 0 ? [] : args.slice(firstFlag)
  const operation = ADMIN_OPERATIONS.find((candidate) => candidate.command.join(' ') === words.join(' '))
  if (!operation) {
    out(words.length > 0 ? `error: unknown admin command "${words.join(' ').slice(0, 100)}"\n${adminUsage()}` : adminUsage())
    return 2
  }
  let input: AdminInput
  try {
    input = toInput(operation, parseFlags(flagArgs))
  } catch (error) {
    out(`error: ${error instanceof Error ? error.message : String(error)}`)
    return 2
  }
  try {
    const result = await operation.run(await services(), input)
    if (result instanceof AdminExport) {
      for await (const chunk of result.chunks()) write(chunk)
    } else out(JSON.stringify(result, null, 2))
    return 0
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error
    out(`error: ${error.message} (${error.code})`)
    return 1
  }
}

/** `--name value` or `--name=value` pairs; names in kebab-case become the API's snake_case. */
function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {}
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? ''
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`)
    const equals = arg.indexOf('=')
    const name = (equals > 0 ? arg.slice(2, equals) : arg.slice(2)).replaceAll('-', '_')
    const value = equals > 0 ? arg.slice(equals + 1) : args[++index]
    if (value === undefined) throw new Error(`--${name.replaceAll('_', '-')} needs a value`)
    flags[name] = value
  }
  return flags
}

function toInput(operation: AdminOperation, flags: Record<string, string>): AdminInput {
  const known = new Set<string>()
  const part = (schema: TObject | undefined): AdminFields => {
    if (!schema) return {}
    const raw = Object.fromEntries(Object.entries(flags).filter(([name]) => name in schema.properties))
    Object.keys(raw).forEach((name) => known.add(name))
    const value = coerceText(schema, raw)
    const first = firstSchemaError(schema, value)
    if (first) {
      const flag = first.path.split('/')[1]?.replaceAll('_', '-') ?? ''
      throw new Error(flag ? `--${flag}: ${describeSchemaError(first)}` : describeSchemaError(first))
    }
    return value
  }
  const input = { params: part(operation.params), query: part(operation.query), body: part(operation.body) }
  const unknown = Object.keys(flags).filter((name) => !known.has(name))
  if (unknown.length > 0) throw new Error(`unknown option ${unknown.map((name) => `--${name.replaceAll('_', '-')}`).join(', ')}`)
  return input
}

export function adminUsage(): string {
  const lines = ADMIN_OPERATIONS.map((operation) => {
    const flags = [operation.params, operation.query, operation.body].flatMap((schema) =>
      schema
        ? Object.keys(schema.properties).map((name) =>
            schema.required?.includes(name) ? `--${name.replaceAll('_', '-')} …` : `[--${name.replaceAll('_', '-')} …]`,
          )
        : [],
    )
    return `  tollgate admin ${operation.command.join(' ')} ${flags.join(' ')}\n      ${operation.summary}`
  })
  return ['usage:', ...lines].join('\n')
}
