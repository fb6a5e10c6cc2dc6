import type { Static, TSchema } from '@sinclair/typebox'
import { describeSchemaError, firstSchemaError } from '../util/schema-errors'

/** A setting the gateway cannot start with: the message names where it is and what is wrong. */
export class ConfigError extends Error {}

/** The value when it matches its schema; else a ConfigError naming its source, the path within it and what is wrong. */
export function checkConfig<T extends TSchema>(schema: T, value: unknown, source: string, formatPath: (pointer: string) => string): Static<T> {
  const first = firstSchemaError(schema, value)
  if (first) {
    const path = formatPath(first.path) || '(root)'
    throw new ConfigError(`${source}: ${path}: ${describeSchemaError(first)}`)
  }
  return value as Static<T>
}
