import { KindGuard, type TSchema } from '@sinclair/typebox'
import type { ValueError } from '@sinclair/typebox/value'
import { InvalidRequestError } from '../errors/kinds'
import { isRecord } from '../util/is-record'
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

/**
 * A multipart form checked as a JSON body is: every field of a form arrives as text, so a field
 * the schema declares a number, an integer or a boolean is read as one first (in place: the
 * handler gets the value it declared), and the form is then refused with its first error, naming
 * the field. A field whose text is not a number stays text and is refused as "Expected number".
 * Elysia's own numeric form fields (`t.Numeric`) check the converted value against a schema of
 * their own and lose the field's name, so form schemas declare plain numbers and come here.
 */
export function refuseInvalidForm(schema: TSchema, form: unknown): void {
  if (isRecord(form) && KindGuard.IsObject(schema)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      const text = form[name]
      if (typeof text !== 'string') continue
      const value = formValueOf(property, text)
      if (value !== undefined) form[name] = value
    }
  }
  refuseInvalidBody(schema, form)
}

/** A plain decimal number as a client's form writes one: no blanks, hex or empty text (which Number() reads as 0). */
const DECIMAL = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/

function formValueOf(schema: TSchema, text: string): number | boolean | undefined {
  if (KindGuard.IsNumber(schema) || KindGuard.IsInteger(schema)) return DECIMAL.test(text) ? Number(text) : undefined
  if (KindGuard.IsBoolean(schema)) return text === 'true' ? true : text === 'false' ? false : undefined
  return undefined
}

/** The client's error for one failed value, named by its path: the one wording for every schema failure. */
export function invalidRequestFor(error: Pick<ValueError, 'path' | 'message' | 'schema' | 'value'>, part: string): InvalidRequestError {
  const param = pointerToPath(error.path)
  const where = part === 'body' ? '' : ` in the ${part}`
  const message = describeSchemaError(error)
  if (!param) return new InvalidRequestError(`Invalid request${where}: ${message}.`)
  return new InvalidRequestError(`Invalid value for '${param}'${where}: ${message}.`, { param })
}
