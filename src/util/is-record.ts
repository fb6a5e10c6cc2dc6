/** A JSON object as the gateway reads or passes it on: fields of every name, none typed. */
export type JsonObject = { [field: string]: unknown }

/** A JSON object (not an array, not null): what a client's or an upstream's nested field must be before its keys are read. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
