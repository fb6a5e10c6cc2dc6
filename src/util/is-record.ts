/** A JSON object as the gateway reads or passes it on: fields of every name, none typed. */
export type JsonObject = { [field: string]: unknown }

/** A JSON object (not an array, not null): what a client's or an upstream's nested field must be before its keys are read. */
export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The JSON object a text holds, or undefined when it holds something else or is not JSON (an SSE event's data, say). */
export function parseJsonObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}
