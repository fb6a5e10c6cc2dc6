import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { UpstreamError } from '../errors/kinds'
import { firstSchemaError } from '../util/schema-errors'

/**
 * What an upstream sent, checked against the wire type the gateway is about to read: the value
 * itself when it fits, else UpstreamError naming where it does not. An upstream is untrusted
 * input like a client; a field of the wrong shape must stop here rather than turn into an
 * `undefined` id or an empty answer further on. Fields the schema does not name pass untouched.
 */
export function decodeWire<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  const first = firstSchemaError(schema, value)
  if (!first) return value
  const where = first?.path ? ` (${first.path}: ${first.message})` : ''
  throw new UpstreamError(`The upstream sent a malformed ${what}${where}.`)
}

/** One event's JSON text from an upstream stream, or UpstreamError when it is not JSON. */
export function parseWireJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UpstreamError(`The upstream sent a ${what} that is not JSON.`, { cause: error })
  }
}

/**
 * A usage count as the wire types declare it: a value of unknown type. Counts are not checked here because
 * billing checks them (billing/usage-guard.ts): one that is present but not a number becomes
 * NaN through `reportedCount`, and the call is then charged its hold with the usage marked
 * invalid, which a malformed-answer error would not do.
 */
export const WireCount = Type.Optional(Type.Unknown())

/** A response's JSON body, or UpstreamError when the body is not JSON. */
export async function readWireJson(response: Response, what: string): Promise<unknown> {
  const text = await response.text()
  return parseWireJson(text, what)
}
