import type { TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { Value, type ValueError } from '@sinclair/typebox/value'

const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>()

/**
 * The first way `value` fails `schema`, or undefined when it fits. A schema is compiled once, on
 * first use: its check answers a fitting value in microseconds without allocating, so only a
 * value that fails is walked again for the error to name (the walk allocates per node).
 */
export function firstSchemaError(schema: TSchema, value: unknown): ValueError | undefined {
  let checker = checkers.get(schema)
  if (!checker) {
    checker = TypeCompiler.Compile(schema)
    checkers.set(schema, checker)
  }
  return checker.Check(value) ? undefined : Value.Errors(schema, value).First()
}

/**
 * Every way `value` fails `schema`, one per path (the first said of it: a missing field is not
 * also reported as the wrong type), in document order; empty when it fits.
 */
export function schemaErrors(schema: TSchema, value: unknown): ValueError[] {
  if (firstSchemaError(schema, value) === undefined) return []
  const byPath = new Map<string, ValueError>()
  for (const error of Value.Errors(schema, value)) {
    if (!byPath.has(error.path)) byPath.set(error.path, error)
  }
  return [...byPath.values()]
}

/** TypeBox's words for a failed value, made plainer where they are vague ("Expected union value"). */
export function describeSchemaError(error: { message: string; schema: TSchema; value?: unknown }): string {
  const options: unknown[] | undefined = Array.isArray(error.schema.anyOf) ? error.schema.anyOf.map((option: TSchema) => option.const) : undefined
  if (options && options.length > 0 && options.every((option) => option !== undefined)) {
    return `Expected one of ${options.map((option) => JSON.stringify(option)).join(', ')}`
  }
  // A nullable field (a value or null): what is wrong with the value, as its own schema says.
  if (Array.isArray(error.schema.anyOf) && error.schema.anyOf.length === 2) {
    const members: TSchema[] = error.schema.anyOf
    const other = members.find((member) => member.type !== 'null')
    const inner = other && members.some((member) => member.type === 'null') ? Value.Errors(other, error.value).First() : undefined
    if (inner) return `${describeSchemaError(inner)}${inner.path ? ` at ${inner.path}` : ''}, or null`
  }
  return error.message
}
