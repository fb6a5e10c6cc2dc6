import { InvalidRequestError } from '../errors/kinds'
import { isRecord, type JsonObject } from '../util/is-record'

/**
 * Reading a client's JSON below what its schema checks: nested blocks a surface decodes for a
 * translated route. A field the decoder needs and cannot find is the client's error, named;
 * nothing is turned into the text "undefined".
 */

/** An object of a client's body below what its schema checks: free-form until each field the decoder needs is read. */
export type ClientObject = JsonObject

/** The members of a JSON array that are objects; a value that is not an array has none. */
export function objectsIn(value: unknown): ClientObject[] {
  return Array.isArray(value) ? value.filter(isRecord) : []
}

/** A string the decoder cannot do without, or 400 invalid_request naming it. */
export function requireString(value: unknown, param: string): string {
  if (typeof value === 'string') return value
  throw new InvalidRequestError(`${param} must be a string.`, { param })
}

/** A string when the value is one. */
export function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === 'string' ? value : fallback
}
