import { isRecord } from './is-record'

/** The JSON object a text holds, or undefined when it holds something else or is not JSON (an SSE event's data, say). */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}
