import { createHash, type Hash } from 'node:crypto'

/**
 * What tells one request from another under the same key: SHA-256 (hex) over its query string
 * and its body, where a JSON value counts the same whatever the order of its object keys, and a
 * form counts its fields by name, a file by its name, type and bytes.
 */
export async function requestFingerprint(body: unknown, query: string): Promise<string> {
  const hash = createHash('sha256')
  hash.update(`${JSON.stringify(query)}\n`)
  await feed(hash, body)
  return hash.digest('hex')
}

/** Writes a value to the hash in one canonical, unambiguous form (every item tagged and delimited). */
async function feed(hash: Hash, value: unknown): Promise<void> {
  if (value instanceof Blob) {
    const name = value instanceof File ? value.name : ''
    hash.update(`f${JSON.stringify(name)}${JSON.stringify(value.type)}${value.size}:`)
    hash.update(new Uint8Array(await value.arrayBuffer()))
    return
  }
  if (Array.isArray(value)) {
    hash.update('[')
    for (const item of value) {
      await feed(hash, item)
      hash.update(',')
    }
    hash.update(']')
    return
  }
  if (value !== null && typeof value === 'object') {
    hash.update('{')
    for (const [name, item] of Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (item === undefined) continue
      hash.update(`${JSON.stringify(name)}:`)
      await feed(hash, item)
      hash.update(',')
    }
    hash.update('}')
    return
  }
  hash.update(value === undefined ? 'u' : `v${JSON.stringify(value)}`)
}
