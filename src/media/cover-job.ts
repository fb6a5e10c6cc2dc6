/**
 * The messages between the gateway and its image thread (image-thread.ts, image-worker.ts): a
 * job to scale and centre-crop an image to an exact size, and what came of it.
 */
export interface CoverJob {
  id: number
  data: Uint8Array
  width: number
  height: number
}

export type CoverResult = { id: number; ok: true; png: Uint8Array } | { id: number; ok: false; unreadable: boolean; message: string }

export function isCoverJob(value: unknown): value is CoverJob {
  if (typeof value !== 'object' || value === null) return false
  return (
    'id' in value &&
    typeof value.id === 'number' &&
    'data' in value &&
    value.data instanceof Uint8Array &&
    'width' in value &&
    typeof value.width === 'number' &&
    'height' in value &&
    typeof value.height === 'number'
  )
}

export function isCoverResult(value: unknown): value is CoverResult {
  if (typeof value !== 'object' || value === null || !('id' in value) || typeof value.id !== 'number' || !('ok' in value)) return false
  if (value.ok === true) return 'png' in value && value.png instanceof Uint8Array
  return value.ok === false && 'unreadable' in value && typeof value.unreadable === 'boolean' && 'message' in value && typeof value.message === 'string'
}
