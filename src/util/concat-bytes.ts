/** Chunks read from a stream as one byte array; `size` is their total length. Most bodies arrive in one chunk: that one is returned, uncopied. */
export function concatBytes(chunks: Uint8Array[], size: number): Uint8Array {
  const [only] = chunks
  if (chunks.length === 1 && only) return only
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
