import type { TSchema } from '@sinclair/typebox'
import type { ValueError } from '@sinclair/typebox/value'
import { InvalidRequestError } from '../errors/kinds'
import { pointerToPath } from '../util/json-pointer'
import { describeSchemaError, firstSchemaError } from '../util/schema-errors'

/**
 * Checks a body against its schema before the framework does, and refuses it with the first
 * error. The framework's own validation of a wrongly typed value can cost seconds of CPU per
 * megabyte (a string where an array belongs is taken apart character by character and every
 * character reported), so one tenant could stall every request; TypeBox's check stops at the
 * first error and costs microseconds. Valid bodies are then validated again by the framework,
 * which is cheap for them.
 */
export function refuseInvalidBody(schema: TSchema, body: unknown): void {
  const first = firstSchemaError(schema, body)
  if (first) throw invalidRequestFor(first, 'body')
}

/** The client's error for one failed value, named by its path: the one wording for every schema failure. */
export function invalidRequestFor(error: Pick<ValueError, 'path' | 'message' | 'schema' | 'value'>, part: string): InvalidRequestError {
  const param = pointerToPath(error.path)
  const where = part === 'body' ? '' : ` in the ${part}`
  const message = describeSchemaError(error)
  if (!param) return new InvalidRequestError(`Invalid request${where}: ${message}.`)
  return new InvalidRequestError(`Invalid value for '${param}'${where}: ${message}.`, { param })
}
