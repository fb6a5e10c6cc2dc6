import type { TSchema } from '@sinclair/typebox'

/** TypeBox's words for a failed value, made plainer where they are vague ("Expected union value"). */
export function describeSchemaError(error: { message: string; schema: TSchema }): string {
  const options: unknown[] | undefined = Array.isArray(error.schema.anyOf)
    ? error.schema.anyOf.map((option: TSchema) => option.const)
    : undefined
  if (options && options.length > 0 && options.every((option) => option !== undefined)) {
    return `Expected one of ${options.map((option) => JSON.stringify(option)).join(', ')}`
  }
  return error.message
}
