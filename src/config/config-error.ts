import type { Static, TSchema } from '@sinclair/typebox'
import { describeSchemaError, schemaErrors } from '../util/schema-errors'

/**
 * A setting the gateway cannot start with: the message names where it is and what is wrong.
 * `fields` go beside the message on the error's log line (every schema error, one a string).
 */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message)
  }
}

/** The most schema errors one message lists; the rest are counted. */
export const MAX_LISTED_ERRORS = 20

/**
 * The value when it matches its schema; else a ConfigError naming its source and every way it
 * fails (up to MAX_LISTED_ERRORS, then how many more), each with its path, so one edit can fix
 * them all rather than one per start.
 */
export function checkConfig<T extends TSchema>(schema: T, value: unknown, source: string, formatPath: (pointer: string) => string): Static<T> {
  const errors = schemaErrors(schema, value)
  if (errors.length === 0) return value as Static<T>
  const described = errors.map((error) => `${formatPath(error.path) || '(root)'}: ${describeSchemaError(error)}`)
  const listed = described.slice(0, MAX_LISTED_ERRORS)
  const more = described.length - listed.length
  if (described.length === 1) throw new ConfigError(`${source}: ${described[0]}`)
  throw new ConfigError(`${source}: ${described.length} errors: ${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`, {
    errors: listed,
    ...(more > 0 ? { more_errors: more } : {}),
  })
}
