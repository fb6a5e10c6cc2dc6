/**
 * Characters as the estimator sees them: their kind (letter, digit, symbol, space, line break),
 * their case, what a character of each script costs, and which Latin letters commonly follow
 * which. Used by text.ts, which prices the pieces a text is cut into.
 */

/** Per character of other scripts, near the worst case for random characters of the script. */
export const IDEOGRAPH = 2
export const RARE_IDEOGRAPH = 3.1
export const ASTRAL_LETTER = 4
export const HANGUL_SYLLABLE = 2.35
export const KANA = 1.2
export const OTHER_LETTER = 1.15
export const COMBINING_MARK = 2.2
export const FULLWIDTH_LETTER = 2
/** A word in those scripts is cheaper until it gets longer than words get: Arabic, Hebrew and Hindi words are one to three tokens. */
export const OTHER_WORD_LETTER = 0.7
export const OTHER_WORD_LENGTH = 12

// Character kinds.
export const SYMBOL = 0
export const SPACE = 1
export const NEWLINE = 2
export const DIGIT = 3
export const LETTER = 4

// Letter shapes, for the cut between words and the cost inside them.
export const LOWER = 1
export const UPPER = 2
export const UNCASED = 3

/**
 * For each letter, the letters that follow it inside English words at least 20 times in a
 * million pairs (counted on 12 MB of English documentation and code comments), with the pairs
 * German words are made of besides (`tz`, `pf`, `zw`, `hn`, `wu`...). Random strings pair letters
 * at random, so over a third of their pairs are missing here, against one in 200 in English and
 * one in 25 in German: the clearest sign of text a tokenizer holds no merges for.
 */
export const COMMON_FOLLOWERS: Record<string, string> = {
  a: 'abcdfghiklmnpqrstuvwxyz',
  b: 'acehijlmoprstuy',
  c: 'acehiklmoprstuy',
  d: 'abcdefgiklmnoprstuvy',
  e: 'abcdefghijklmnopqrstuvwxy',
  f: 'acdefilnorstuy',
  g: 'aeghilmnoprstuy',
  h: 'abehilmnorstuwy',
  i: 'abcdefgiklmnopqrstvxz',
  j: 'eiosuw',
  k: 'adefgilmnpstu',
  l: 'abcdefgiklmoprstuvwyz',
  m: 'abcdeilmnopstuy',
  n: 'acdefghijklmnoprstuvyz',
  o: 'abcdefghijklmnoprstuvwxy',
  p: 'abcdefghilmnoprstuy',
  q: 'lu',
  r: 'abcdefgiklmnoprstuvwyz',
  s: 'acdefhiklmnopqrstuvwy',
  t: 'abcdefghilmnoprstuwxyz',
  u: 'abcdefghilmnoprstu',
  v: 'aegio',
  w: 'aehiklnoprstu',
  x: 'aceilpty',
  y: 'bceilmnoprstwy',
  z: 'aeilouw',
}
/** COMMON_FOLLOWERS as bit masks, indexed by letter (0 for a): bit n is set when letter n commonly follows. */
export const FOLLOWER_MASKS = new Int32Array(26)
for (const [letter, followers] of Object.entries(COMMON_FOLLOWERS)) {
  let mask = 0
  for (const follower of followers) mask |= 1 << (follower.charCodeAt(0) - 97)
  FOLLOWER_MASKS[letter.charCodeAt(0) - 97] = mask
}

/** Kinds of the ASCII characters, indexed by code. */
export const ASCII_KIND = new Uint8Array(128)
for (let code = 0; code < 128; code++) {
  ASCII_KIND[code] =
    (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
      ? LETTER
      : code >= 48 && code <= 57
        ? DIGIT
        : code === 10 || code === 13
          ? NEWLINE
          : code === 32 || code === 9 || code === 11 || code === 12
            ? SPACE
            : SYMBOL
}

/** Whitespace outside ASCII: no-break, typographic and ideographic spaces, line and paragraph separators. */
export function isWhitespace(code: number): boolean {
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  )
}

export function isAnyWhitespace(code: number): boolean {
  return code < 128 ? ASCII_KIND[code] === SPACE || ASCII_KIND[code] === NEWLINE : isWhitespace(code)
}

/** Decimal digits outside ASCII: Arabic, Indic, Thai and full-width. */
export function isDigit(code: number): boolean {
  if (code < 0x660 || code > 0xff19) return false
  if (code >= 0xff10) return true
  if (code <= 0x669 || (code >= 0x6f0 && code <= 0x6f9)) return true
  // Indic scripts and Thai put their digits at the same offset of each 128-character block.
  if (code >= 0x966 && code <= 0xdef) return (code & 0x7f) >= 0x66 && (code & 0x7f) <= 0x6f
  return code >= 0xe50 && code <= 0xe59
}

export function kindOf(code: number): number {
  if (code < 128) return ASCII_KIND[code] ?? SYMBOL
  if (isWhitespace(code)) return SPACE
  if (isDigit(code)) return DIGIT
  return letterCost(code) > 0 ? LETTER : SYMBOL
}

export const ARMENIAN_HEBREW_PUNCTUATION = new Set([0x589, 0x58a, 0x5be, 0x5c0, 0x5c3, 0x5c6, 0x5f3, 0x5f4])

/**
 * What a letter outside ASCII costs by itself, or 0 when the character is not a letter. Latin,
 * Cyrillic and Greek letters answer a nominal 1: their cost is worked out per word.
 */
export function letterCost(code: number): number {
  if (code < 0xc0) return code === 0xaa || code === 0xb5 || code === 0xba ? 1 : 0 // Latin-1 symbols but ª, µ, º
  if (code < 0x250) return code === 0xd7 || code === 0xf7 ? 0 : 1 // Latin letters but × and ÷
  if (code < 0x2b0) return 1 // IPA
  if (code < 0x300) return 0 // spacing modifiers: symbols for our purpose
  if (code < 0x370) return COMBINING_MARK
  if (code < 0x530) return code === 0x37e || code === 0x387 || (code >= 0x482 && code <= 0x489) ? 0 : 1
  if (code < 0x600) return ARMENIAN_HEBREW_PUNCTUATION.has(code) ? 0 : OTHER_LETTER
  if (code < 0x620) return 0 // Arabic punctuation and format marks
  if (code < 0x900) return code === 0x66a || code === 0x66b || code === 0x66c || code === 0x66d || code === 0x6d4 ? 0 : OTHER_LETTER
  if (code < 0x1e00) return code === 0x964 || code === 0x965 || code === 0xe3f || code === 0xe4f || code === 0xe5a || code === 0xe5b ? 0 : OTHER_LETTER
  if (code < 0x2000) return 1 // Latin Extended Additional (Vietnamese), Greek Extended
  if (code < 0x2c00) return 0 // punctuation, currency, arrows, maths, box drawing, dingbats
  if (code < 0x2e00) return OTHER_LETTER
  if (code < 0x3040) return code === 0x3005 || code === 0x3006 ? IDEOGRAPH : 0
  if (code < 0x3100) return code === 0x30fb ? 0 : KANA
  if (code < 0x3200) return OTHER_LETTER
  if (code < 0x3400) return 0 // enclosed and compatibility symbols
  if (code < 0x4dc0) return RARE_IDEOGRAPH
  if (code < 0x4e00) return 0 // hexagrams
  if (code < 0xa000) return IDEOGRAPH
  if (code < 0xa490) return OTHER_LETTER // Yi
  if (code < 0xa4d0) return 0
  if (code < 0xac00) return OTHER_LETTER
  if (code < 0xd7b0) return HANGUL_SYLLABLE
  if (code < 0xd800) return OTHER_LETTER
  if (code < 0xf900) return 0 // private use
  if (code < 0xfb00) return RARE_IDEOGRAPH
  if (code < 0xfe00) return OTHER_LETTER // presentation forms
  if (code < 0xfe70) return 0 // variation selectors, vertical and small forms
  if (code < 0xff00) return code === 0xfeff ? 0 : OTHER_LETTER
  if ((code >= 0xff21 && code <= 0xff3a) || (code >= 0xff41 && code <= 0xff5a)) return FULLWIDTH_LETTER
  if (code >= 0xff66 && code <= 0xffdc) return OTHER_LETTER
  if (code < 0x10000) return 0
  if (code >= 0x1f000 && code < 0x1fc00) return 0 // emoji and other pictographs
  if (code >= 0x1d400 && code < 0x1d800) return ASTRAL_LETTER // mathematical letters
  if (code >= 0xe0000) return 0 // tags and private use
  return code < 0x1d000 || code >= 0x20000 ? ASTRAL_LETTER : 0 // historic scripts, rare ideographs
}

/** Latin, Cyrillic and Greek: the scripts whose words are priced per word rather than per character. */
export function isAlphabetic(code: number): boolean {
  return code < 0x530 ? code < 0x2b0 || code >= 0x370 : code >= 0x1e00 && code < 0x2000
}

/** Upper case, lower case or neither, by block; Latin Extended-A and Cyrillic alternate capital and small letter. */
export function shapeOf(code: number): number {
  if (code < 128) return code <= 90 ? UPPER : LOWER
  if (code < 0x100) return code <= 0xde ? UPPER : LOWER
  if (code < 0x180) return (code >= 0x139 && code <= 0x148) || code >= 0x179 ? (code & 1 ? UPPER : LOWER) : code & 1 ? LOWER : UPPER
  if (code < 0x250) return UNCASED
  if (code < 0x2b0) return LOWER
  if (code >= 0x386 && code < 0x3ac) return UPPER
  if (code >= 0x3ac && code < 0x400) return LOWER
  if (code >= 0x400 && code < 0x430) return UPPER
  if (code >= 0x430 && code < 0x460) return LOWER
  if (code >= 0x460 && code < 0x530) return code & 1 ? LOWER : UPPER
  if (code >= 0x1e00 && code < 0x1f00) return code & 1 ? LOWER : UPPER
  if (code >= 0xff21 && code <= 0xff3a) return UPPER
  if (code >= 0xff41 && code <= 0xff5a) return LOWER
  return UNCASED
}

/** Tokens a symbol costs by itself: by UTF-8 length, with the cheap and the dear blocks set apart. */
export function symbolCost(code: number): number {
  if (code < 0x800) return 1
  if (code < 0x10000) {
    // Typographic quotes, dashes, bullets, ellipsis, arrows and CJK punctuation are common single tokens.
    if ((code >= 0x2013 && code <= 0x2026) || (code >= 0x2190 && code <= 0x2193) || (code >= 0x3001 && code <= 0x3011) || code === 0x20ac) return 1
    if (code === 0x200d || (code >= 0xfe00 && code <= 0xfe0f) || code === 0x20e3) return 1 // emoji joiners and selectors
    if (code < 0x2300 || (code >= 0x2500 && code < 0x2600)) return 2
    if (code >= 0xff00 && code < 0xfff0) return 2
    return 3
  }
  if (code >= 0x1f000 && code < 0x1fc00) return 3
  return 4
}

/** Tokens of a run of one whitespace character: long runs of spaces merge further than newlines or tabs. */
export function whitespaceRunCost(code: number, length: number): number {
  if (code === 32) return Math.ceil(length / 64)
  if (code === 10 || code === 9) return Math.ceil(length / 16)
  if (code === 13) return Math.ceil(length / 8)
  return length
}

/** Tokens of a whitespace run from start to end (exclusive), counted by runs of the same character. */
export function whitespaceCost(text: string, start: number, end: number): number {
  let tokens = 0
  let index = start
  while (index < end) {
    const code = text.charCodeAt(index)
    let stop = index + 1
    // A CRLF pair counts as one character of its own kind: two of them cost what one does.
    if (code === 13 && text.charCodeAt(stop) === 10) {
      while (stop + 1 < end && text.charCodeAt(stop + 1) === 13 && text.charCodeAt(stop + 2) === 10) stop += 2
      tokens += Math.ceil((stop + 1 - index) / 8)
      index = stop + 1
      continue
    }
    while (stop < end && text.charCodeAt(stop) === code) stop++
    tokens += whitespaceRunCost(code, stop - index)
    index = stop
  }
  return tokens
}

export function isDigitAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index)
  return code < 128 ? code >= 48 && code <= 57 : isDigit(code)
}

/** The code point at index, joining a surrogate pair (a lone surrogate stands for itself). */
export function codePointAt(text: string, index: number): number {
  const code = text.charCodeAt(index)
  if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
    const low = text.charCodeAt(index + 1)
    if (low >= 0xdc00 && low <= 0xdfff) return ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000
  }
  return code
}
