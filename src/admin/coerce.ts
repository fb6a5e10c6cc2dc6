import type { TObject, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { InvalidRequestError } from '../errors/kinds'
import { isRecord } from '../util/is-record'
import type { AdminFields } from './operation'

/**
 * Text values (a query string, CLI flags) turned into what the schema expects: numbers,
 * booleans, comma-separated lists, JSON objects. Validation still follows; this only converts.
 */
export function coerceText(schema: TObject, raw: AdminFields): AdminFields {
  const out: AdminFields = {}
  for (const [name, value] of Object.entries(raw)) {
    const property: TSchema | undefined = schema.properties[name]
    out[name] = typeof value === 'string' && property ? fromText(property, value, name) : value
  }
  // Convert keeps the object an object; the guard only tells the type checker so.
  const converted = Value.Convert(schema, out)
  return isRecord(converted) ? converted : out
}

function fromText(schema: TSchema, text: string, name: string): unknown {
  // A nullable field (`keys update --rpm null`): `null` clears it, anything else is read as the other member.
  if (Array.isArray(schema.anyOf)) {
    const members: TSchema[] = schema.anyOf.filter((member: TSchema) => member.type !== 'null')
    if (members.length < schema.anyOf.length && text === 'null') return null
    const [only] = members
    return members.length === 1 && only ? fromText(only, text, name) : text
  }
  if (schema.type === 'array') {
    return text.trim().startsWith('[')
      ? parseJson(text, name)
      : text
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean)
  }
  if (schema.type === 'object') return parseJson(text, name)
  return text
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new InvalidRequestError(`${name} must be JSON.`, { param: name })
  }
}
