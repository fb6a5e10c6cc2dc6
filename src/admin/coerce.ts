import type { TObject, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { InvalidRequestError } from '../errors/kinds'

/**
 * Text values (a query string, CLI flags) turned into what the schema expects: numbers,
 * booleans, comma-separated lists, JSON objects. Validation still follows; this only converts.
 */
export function coerceText(schema: TObject, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(raw)) {
    const property: TSchema | undefined = schema.properties[name]
    out[name] = typeof value === 'string' && property ? fromText(property, value, name) : value
  }
  return Value.Convert(schema, out) as Record<string, unknown>
}

function fromText(schema: TSchema, text: string, name: string): unknown {
  if (schema.type === 'array') {
    return text.trim().startsWith('[') ? parseJson(text, name) : text.split(',').map((part) => part.trim()).filter(Boolean)
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
