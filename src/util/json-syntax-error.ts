/**
 * Where a JSON text first goes wrong, as an editor counts it (line and column from 1), with what
 * was expected there. Bun's JSON.parse says what it met but not where; this reads the text
 * again (RFC 8259's grammar) only after JSON.parse has refused it, so a config error can point
 * at the line to fix.
 */
export interface JsonSyntaxError {
  line: number
  column: number
  /** What the text holds there and what would have been valid: `found "}", expected a value`. */
  problem: string
}

/** Deeper than this is refused as such: the reader recurses, and a config file never nests so. */
const MAX_DEPTH = 512

export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let at = 0
  const fail = (expected: string): never => {
    throw new SyntaxFailure(at, expected)
  }
  const skipSpace = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at] ?? '')) at++
  }
  const expect = (character: string, expected: string) => {
    skipSpace()
    if (text[at] !== character) fail(expected)
    at++
  }
  const readString = () => {
    at++
    for (;;) {
      const character = text[at]
      if (character === undefined) fail('the closing quote of a string')
      else if (character === '"') break
      else if (character === '\\') {
        const escaped = text[at + 1] ?? ''
        if ('"\\/bfnrt'.includes(escaped) && escaped !== '') at += 2
        else if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) at += 6
        else {
          at++
          fail('an escape such as \\n, \\" or \\u0041')
        }
      } else if (character < ' ') fail('no control character inside a string (write \\n for a line break)')
      else at++
    }
    at++
  }
  const readValue = (depth: number): void => {
    skipSpace()
    if (depth > MAX_DEPTH) fail(`at most ${MAX_DEPTH} levels of nesting`)
    const character = text[at]
    if (character === '{') {
      at++
      skipSpace()
      if (text[at] === '}') {
        at++
        return
      }
      for (;;) {
        skipSpace()
        if (text[at] !== '"') fail(text[at] === '}' ? 'a member name in double quotes (JSON allows no comma before "}")' : 'a member name in double quotes')
        readString()
        expect(':', '":" after the member name')
        readValue(depth + 1)
        skipSpace()
        if (text[at] === ',') at++
        else if (text[at] === '}') {
          at++
          return
        } else fail('"," or "}"')
      }
    } else if (character === '[') {
      at++
      skipSpace()
      if (text[at] === ']') {
        at++
        return
      }
      for (;;) {
        readValue(depth + 1)
        skipSpace()
        if (text[at] === ',') at++
        else if (text[at] === ']') {
          at++
          return
        } else fail('"," or "]"')
      }
    } else if (character === '"') readString()
    else if (character !== undefined && /[-0-9]/.test(character)) {
      const number = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(at, at + 400))
      if (!number) fail('a number')
      at += number?.[0].length ?? 0
    } else {
      const word = ['true', 'false', 'null'].find((literal) => text.startsWith(literal, at))
      if (!word) fail(character === ']' ? 'a value (JSON allows no comma before "]")' : 'a value')
      at += word?.length ?? 0
    }
  }
  try {
    readValue(0)
    skipSpace()
    if (at < text.length) fail('the end of the text after the top-level value')
    return undefined
  } catch (error) {
    if (!(error instanceof SyntaxFailure)) throw error
    return { ...lineAndColumn(text, error.offset), problem: `found ${describeAt(text, error.offset)}, expected ${error.expected}` }
  }
}

class SyntaxFailure {
  constructor(
    readonly offset: number,
    readonly expected: string,
  ) {}
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let index = 0; index < offset; index++) {
    if (text[index] === '\n') {
      line++
      lineStart = index + 1
    }
  }
  return { line, column: offset - lineStart + 1 }
}

function describeAt(text: string, offset: number): string {
  const character = text[offset]
  if (character === undefined) return 'the end of the text'
  if (character === '\n' || character === '\r') return 'the end of the line'
  return JSON.stringify(text.slice(offset, offset + 12).split(/[\r\n]/)[0])
}
