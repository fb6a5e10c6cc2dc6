import { GatewayError } from '../errors/gateway-error'
import { UpstreamError } from '../errors/kinds'
import type { JsonObject } from '../util/is-record'

/**
 * An upstream's JSON answer (or stream event) on its way to the client: the gateway reads or sets
 * a few named fields (the usage, the model shown) and passes every other field as it came, so
 * its fields are free-form.
 */
export type UpstreamObject = JsonObject

/**
 * Reading an upstream's whole JSON answer: a body that is not JSON, or not the JSON the caller
 * needs, is an upstream failure (502), never a crash; a stream that went silent keeps its own
 * error (the idle timeout).
 */

/** What the gateway says of an upstream answer it cannot read. */
const UNREADABLE = 'The upstream answered with something the gateway could not read.'

/** The upstream's answer as JSON, unchecked; a body that is not JSON is an UpstreamError. */
export async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json()
  } catch (error) {
    throw error instanceof GatewayError ? error : new UpstreamError(UNREADABLE, { cause: error })
  }
}

/** The upstream's answer as a JSON object; a body that is not JSON, or JSON that is not an object, is an UpstreamError. */
export async function readJsonObject(response: Response): Promise<UpstreamObject> {
  const object = jsonObject(await readJson(response))
  if (object === undefined) throw new UpstreamError(UNREADABLE)
  return object
}

const utf8 = new TextDecoder()

/**
 * As readJsonObject, from a body the caller reads itself (under the silence deadline,
 * streaming/idle-timeout.ts): a read that fails, or bytes that are not a JSON object, are an
 * UpstreamError; a GatewayError (the silence deadline's) stays itself.
 */
export async function readJsonObjectBytes(read: Promise<Uint8Array>): Promise<UpstreamObject> {
  let value: unknown
  try {
    value = JSON.parse(utf8.decode(await read))
  } catch (error) {
    throw error instanceof GatewayError ? error : new UpstreamError(UNREADABLE, { cause: error })
  }
  const object = jsonObject(value)
  if (object === undefined) throw new UpstreamError(UNREADABLE)
  return object
}

/** A JSON value as an object, or undefined when it is not one (null, an array, a scalar). */
export function jsonObject(value: unknown): UpstreamObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : undefined
}

/** An answer's own `usage` object (none: an empty one) with the cost added, as the client reads it. */
export function usageWithCost(usage: unknown, cost: number): UpstreamObject {
  return { ...jsonObject(usage), cost }
}
