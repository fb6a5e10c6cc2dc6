import { describe, expect, test } from 'bun:test'
import { ChunkedDecoder } from '../../src/upstream-http/body-decoder'

const bytes = (text: string) => new TextEncoder().encode(text)

/** Decodes `wire` fed in pieces of `step` bytes: the body's text, and whether it ended. */
function decode(wire: string, step = wire.length): { body: string; done: boolean; excess: number } {
  const decoder = new ChunkedDecoder()
  const out: Uint8Array[] = []
  const all = bytes(wire)
  for (let at = 0; at < all.length; at += step) decoder.push(all.subarray(at, at + step), out)
  return { body: new TextDecoder().decode(Buffer.concat(out)), done: decoder.done, excess: decoder.excess }
}

const failure = (wire: string) => {
  try {
    decode(wire)
  } catch (error) {
    return (error as Error).message
  }
  return 'no failure'
}

describe('chunked bodies, size lines read byte by byte', () => {
  test('sizes in either case, spaces before extensions, and trailers read past, at every split', () => {
    const wire = '5\r\nhello\r\nA ;name=value\r\n0123456789\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\nEXTRA'
    for (const step of [1, 2, 3, 7, wire.length]) expect(decode(wire, step)).toEqual({ body: 'hello0123456789', done: true, excess: 5 })
  })

  test('a last chunk without trailers ends the body at its empty line', () => {
    expect(decode('3\r\nabc\r\n0\r\n\r\n')).toEqual({ body: 'abc', done: true, excess: 0 })
    expect(decode('3\r\nabc\r\n0\r\n')).toEqual({ body: 'abc', done: false, excess: 0 })
  })

  test('malformed size lines fail as protocol errors', () => {
    expect(failure('5\nhello\r\n')).toContain('not ended by CRLF')
    expect(failure('\r\nhello\r\n')).toContain('not hexadecimal')
    expect(failure('5g\r\nhello\r\n')).toContain('not hexadecimal')
    expect(failure('5 5\r\nhello\r\n')).toContain('not hexadecimal')
    expect(failure('1000000000000\r\n')).toContain('not hexadecimal')
    expect(failure(`${'0'.repeat(5000)}`)).toContain('not hexadecimal')
    expect(failure(`1;${'x'.repeat(5000)}`)).toContain('past its bound')
    expect(failure('3\r\nabcX\r\n')).toContain('not followed by CRLF')
  })
})
