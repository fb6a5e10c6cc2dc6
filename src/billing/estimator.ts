/**
 * The gateway's own token estimate: what holds are sized from, and what count_tokens answers.
 * It must not come out below what a real BPE tokenizer counts (a hold that is too small lets a
 * call cost more than was reserved), yet stay close on prose and code. Measured against o200k
 * (test/billing/estimator.test.ts), it is never below on any sample of prose, code, JSON,
 * base64, hex, random keys, CJK, other scripts or emoji, and at most 35% above on prose and code.
 *
 * It walks the text once, cutting it where BPE tokenizers cut before they merge (the o200k
 * pre-tokenizer): a word with at most one leading space or mark, cut again where lower case turns
 * upper (`getUserId` is three words); digits in threes; a run of punctuation; a run of whitespace.
 * Every such piece is at least one token. What a piece costs beyond that depends on how much it
 * looks like what the tokenizer's vocabulary was learnt from, English prose and code:
 * - A Latin word is cut again wherever two letters meet that English and German words never put
 *   side by side: random strings (keys, base64, hashes) are full of such pairs, so they cost a
 *   token every two or three letters, while a dictionary word is one token and a long one a few.
 * - Text where many words carry accents or such pairs is in another language (German, French,
 *   Czech...), and every word of it costs more, short common ones included.
 * - Other scripts cost per character, near the worst case for random characters of that script,
 *   since without a vocabulary there is no telling a common character from a rare one.
 * - Symbols and emoji cost by their UTF-8 length: BPE merges their shared lead bytes, seldom the
 *   last one, so a four-byte emoji is up to three tokens and a family or a flag several more.
 * It runs on every request body, so it allocates nothing per character and holds no vocabulary.
 */

/** What a word costs before its letters: negative, so that words up to six letters cost about one token. */
const WORD_BASE = -0.4
/** Per Latin letter of a word (or of a segment between rare pairs). */
const LATIN_LETTER = 0.25
/** Per Cyrillic or Greek letter: o200k merges these less than Latin ones (Ukrainian and Greek words run to two or three tokens). */
const CYRILLIC_GREEK_LETTER = 0.6
/** Per pair of letters that English and German words do not have side by side, besides the cut it makes. */
const RARE_PAIR = 0.25
/** Per letter with a diacritic: vocabularies hold fewer merges for them, the fewest for those past Latin-1 (`ř`, `ő`, `ş`). */
const ACCENTED_LETTER = 0.1
const EXTENDED_LETTER = 0.5
/** Per capital after the first in a word: all-caps words merge less than lower-case ones. */
const EXTRA_CAPITAL = 0.12
/** Per letter after the first of a word glued to digits (`3fa9c`, `e29b`): hex and keys, which merge poorly. */
const GLUED_LETTER = 0.4
/** Per letter beyond the length words have: longer runs are compounds or random text, cut every few letters. */
const LONG_WORD_LETTER = 0.3
const LONG_WORD_LENGTH = 24
/**
 * In a language other than English a word costs this much (with the same segments), whatever its
 * letters: German `Nebel` and `Fluss` are two tokens each, `Leuchtturm` four.
 */
const FOREIGN_WORD_BASE = 0.8
const FOREIGN_LETTER = 0.14
/** And per capital after the first: vocabularies hold even fewer all-caps words of other languages. */
const FOREIGN_EXTRA_CAPITAL = 0.2
/**
 * The share of words with accents or rare pairs above which text is taken for another language,
 * and fully so this much higher: English prose and code stay under 5%, German is over 12%.
 */
const FOREIGN_SHARE_FROM = 0.06
const FOREIGN_SHARE_RAMP = 0.06
/**
 * Italian, Spanish, Portuguese and Finnish words look English letter by letter, but over a third
 * of them end in a, i, o or u, which under 8% of English words or code identifiers do.
 */
const VOWEL_ENDING_SHARE_FROM = 0.15
const VOWEL_ENDING_SHARE_RAMP = 0.1
/**
 * That pricing is for prose: code and JSON keep English keywords among their odd identifiers,
 * and have a run of punctuation every two words or so where prose has one every seven. Above
 * this many runs per word text counts less and less as prose, not at all this much higher.
 */
const PROSE_PUNCTUATION_UP_TO = 0.25
const PROSE_PUNCTUATION_RAMP = 0.2

/** Per character of other scripts, near the worst case for random characters of the script. */
const IDEOGRAPH = 2
const RARE_IDEOGRAPH = 3.1
const ASTRAL_LETTER = 4
const HANGUL_SYLLABLE = 2.35
const KANA = 1.2
const OTHER_LETTER = 1.15
const COMBINING_MARK = 2.2
const FULLWIDTH_LETTER = 2
/** A word in those scripts is cheaper until it gets longer than words get: Arabic, Hebrew and Hindi words are one to three tokens. */
const OTHER_WORD_LETTER = 0.7
const OTHER_WORD_LENGTH = 12

/** Punctuation after the first in a run: `();`, `=>`, `"},` often merge, random symbols do not. */
const PUNCTUATION_FOLLOWING = 0.5
/** The same mark again: rules (`-----`, `=====`) merge into long tokens, brackets and quotes by fours, backticks by twos. */
const RULE_MARK_REPEATED = 0.125
const PUNCTUATION_REPEATED = 0.25
const BACKTICK_REPEATED = 0.5
/** A single mark glued to a word adds this to it: `.com`, `_id`, `(self` merge; `-based`, `/api` often; others seldom. */
const PREFIX_CHEAP = 0
const PREFIX_MEDIUM = 0.5
/** Before a capitalised word those marks merge less often (`.Jobs`, `<Button`, `/Users`). */
const PREFIX_BEFORE_CAPITAL = 0.6

// Character kinds.
const SYMBOL = 0
const SPACE = 1
const NEWLINE = 2
const DIGIT = 3
const LETTER = 4

// Letter shapes, for the cut between words and the cost inside them.
const LOWER = 1
const UPPER = 2
const UNCASED = 3

/**
 * For each letter, the letters that follow it inside English words at least 20 times in a
 * million pairs (counted on 12 MB of English documentation and code comments), with the pairs
 * German words are made of besides (`tz`, `pf`, `zw`, `hn`, `wu`...). Random strings pair letters
 * at random, so over a third of their pairs are missing here, against one in 200 in English and
 * one in 25 in German: the clearest sign of text a tokenizer holds no merges for.
 */
const COMMON_FOLLOWERS: Record<string, string> = {
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
const FOLLOWER_MASKS = new Int32Array(26)
for (const [letter, followers] of Object.entries(COMMON_FOLLOWERS)) {
  let mask = 0
  for (const follower of followers) mask |= 1 << (follower.charCodeAt(0) - 97)
  FOLLOWER_MASKS[letter.charCodeAt(0) - 97] = mask
}

/** Kinds of the ASCII characters, indexed by code. */
const ASCII_KIND = new Uint8Array(128)
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
function isWhitespace(code: number): boolean {
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

function isAnyWhitespace(code: number): boolean {
  return code < 128 ? ASCII_KIND[code] === SPACE || ASCII_KIND[code] === NEWLINE : isWhitespace(code)
}

/** Decimal digits outside ASCII: Arabic, Indic, Thai and full-width. */
function isDigit(code: number): boolean {
  if (code < 0x660 || code > 0xff19) return false
  if (code >= 0xff10) return true
  if (code <= 0x669 || (code >= 0x6f0 && code <= 0x6f9)) return true
  // Indic scripts and Thai put their digits at the same offset of each 128-character block.
  if (code >= 0x966 && code <= 0xdef) return (code & 0x7f) >= 0x66 && (code & 0x7f) <= 0x6f
  return code >= 0xe50 && code <= 0xe59
}

function kindOf(code: number): number {
  if (code < 128) return ASCII_KIND[code] ?? SYMBOL
  if (isWhitespace(code)) return SPACE
  if (isDigit(code)) return DIGIT
  return letterCost(code) > 0 ? LETTER : SYMBOL
}

const ARMENIAN_HEBREW_PUNCTUATION = new Set([0x589, 0x58a, 0x5be, 0x5c0, 0x5c3, 0x5c6, 0x5f3, 0x5f4])

/**
 * What a letter outside ASCII costs by itself, or 0 when the character is not a letter. Latin,
 * Cyrillic and Greek letters answer a nominal 1: their cost is worked out per word.
 */
function letterCost(code: number): number {
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
function isAlphabetic(code: number): boolean {
  return code < 0x530 ? code < 0x2b0 || code >= 0x370 : code >= 0x1e00 && code < 0x2000
}

/** Upper case, lower case or neither, by block; Latin Extended-A and Cyrillic alternate capital and small letter. */
function shapeOf(code: number): number {
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
function symbolCost(code: number): number {
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
function whitespaceRunCost(code: number, length: number): number {
  if (code === 32) return Math.ceil(length / 64)
  if (code === 10 || code === 9) return Math.ceil(length / 16)
  if (code === 13) return Math.ceil(length / 8)
  return length
}

/** Tokens of a whitespace run from start to end (exclusive), counted by runs of the same character. */
function whitespaceCost(text: string, start: number, end: number): number {
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

function isDigitAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index)
  return code < 128 ? code >= 48 && code <= 57 : isDigit(code)
}

/** The code point at index, joining a surrogate pair (a lone surrogate stands for itself). */
function codePointAt(text: string, index: number): number {
  const code = text.charCodeAt(index)
  if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
    const low = text.charCodeAt(index + 1)
    if (low >= 0xdc00 && low <= 0xdfff) return ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000
  }
  return code
}

/** Where a word ends, and what the whole-text judgement of its language needs to know about it. */
interface WordResult {
  end: number
  latinLetters: number
  marked: boolean
  /** Whether the word ends in a, i, o or u. */
  vowelEnding: boolean
  /** What the word costs more if the text is in a language other than English. */
  foreignExtra: number
}

/**
 * Tokens of the word starting at index, and where it ends. A word is a run of letters that stops
 * where an upper-case letter follows a lower-case or uncased one (`getUserId` is three words).
 */
function wordCost(text: string, start: number, result: WordResult): number {
  let index = start
  let letters = 0
  let accented = 0
  let extended = 0
  let capitals = 0
  let rarePairs = 0
  let cyrillicGreekLetters = 0
  // A pair of letters no common word has is almost surely a cut between tokens: the word is
  // priced as the segments between such pairs, each at least a token.
  let segments = 0
  let segment = 0
  let foreignSegments = 0
  let foreignSegment = 0
  let otherLetters = 0
  let otherCost = 0
  let previousShape = 0
  let previousLetter = -1
  while (index < text.length) {
    let code = text.charCodeAt(index)
    let shape: number
    if (code < 128) {
      if (ASCII_KIND[code] !== LETTER) break
      shape = code <= 90 ? UPPER : LOWER
    } else {
      code = codePointAt(text, index)
      if (kindOf(code) !== LETTER) break
      shape = shapeOf(code)
    }
    if (shape === UPPER && previousShape !== 0 && previousShape !== UPPER) break
    previousShape = shape
    index += code > 0xffff ? 2 : 1
    if (code >= 128 && !isAlphabetic(code)) {
      const cost = letterCost(code)
      otherLetters++
      otherCost += otherLetters <= OTHER_WORD_LENGTH && cost === OTHER_LETTER ? OTHER_WORD_LETTER : cost
      continue
    }
    letters++
    if (shape === UPPER && letters > 1) capitals++
    if (code < 128) {
      const letter = (code | 0x20) - 97
      if (previousLetter >= 0 && ((FOLLOWER_MASKS[previousLetter] ?? 0) & (1 << letter)) === 0) {
        rarePairs++
        segments += Math.max(1, WORD_BASE + segment)
        foreignSegments += Math.max(1, FOREIGN_WORD_BASE + foreignSegment)
        segment = 0
        foreignSegment = 0
      }
      previousLetter = letter
      segment += LATIN_LETTER
      foreignSegment += FOREIGN_LETTER
    } else if (code >= 0x370 && code < 0x530) {
      previousLetter = -1
      segment += CYRILLIC_GREEK_LETTER
      cyrillicGreekLetters++
    } else {
      previousLetter = -1
      segment += LATIN_LETTER
      foreignSegment += FOREIGN_LETTER
      accented++
      if (code >= 0x100) extended++
    }
  }
  result.end = index
  result.latinLetters = letters
  result.marked = accented > 0 || rarePairs > 0
  result.vowelEnding = previousLetter === 0 || previousLetter === 8 || previousLetter === 14 || previousLetter === 20
  result.foreignExtra = 0
  if (letters === 0) return Math.max(1, otherCost)
  if (cyrillicGreekLetters === 0) {
    result.foreignExtra = foreignSegments + Math.max(1, FOREIGN_WORD_BASE + foreignSegment) - segments - Math.max(1, WORD_BASE + segment)
    result.foreignExtra += capitals * FOREIGN_EXTRA_CAPITAL
  }
  let cost = segments + Math.max(1, WORD_BASE + segment) + otherCost
  cost += rarePairs * RARE_PAIR + accented * ACCENTED_LETTER + extended * EXTENDED_LETTER + capitals * EXTRA_CAPITAL
  cost += Math.max(0, letters - LONG_WORD_LENGTH) * LONG_WORD_LETTER
  // Letters glued to digits (`3fa9c`, `e29b`) are hex or keys, which merge poorly.
  if (letters > 1 && ((start > 0 && isDigitAt(text, start - 1)) || (index < text.length && isDigitAt(text, index)))) {
    cost += (letters - 1) * GLUED_LETTER
  }
  return cost
}

/** Tokens of a text, in one pass over it (see the top of this file). */
export function estimateTextTokens(text: string): number {
  let tokens = 0
  let index = 0
  const word: WordResult = { end: 0, latinLetters: 0, marked: false, vowelEnding: false, foreignExtra: 0 }
  let words = 0
  let markedWords = 0
  let vowelEndingWords = 0
  let foreignExtra = 0
  let punctuationRuns = 0
  const countWord = () => {
    foreignExtra += word.foreignExtra
    if (word.latinLetters < 2) return
    words++
    if (word.marked) markedWords++
    if (word.vowelEnding) vowelEndingWords++
  }
  const length = text.length
  while (index < length) {
    const unit = text.charCodeAt(index)
    const code = unit < 0xd800 ? unit : codePointAt(text, index)
    const kind = code < 128 ? (ASCII_KIND[code] ?? SYMBOL) : kindOf(code)

    if (kind === SPACE || kind === NEWLINE) {
      let end = index + 1
      while (end < length && isAnyWhitespace(text.charCodeAt(end))) end++
      // The last space before a word or a symbol belongs to it (` word`, ` {`); before a digit it is a token of its own.
      const last = text.charCodeAt(end - 1)
      if (end < length && last !== 10 && last !== 13) {
        const next = kindOf(codePointAt(text, end))
        if (next === LETTER || (next === SYMBOL && last === 32)) {
          if (end - 1 > index) tokens += whitespaceCost(text, index, end - 1)
          if (next === SYMBOL) {
            punctuationRuns++
            tokens += symbolRunCost(text, end, word)
          } else {
            tokens += wordCost(text, end, word)
            countWord()
          }
          index = word.end
          continue
        }
      }
      // Before a digit, or a tab before a symbol, the last one is a token of its own.
      if (end < length && last !== 10 && last !== 13 && end - 1 > index) tokens += whitespaceCost(text, index, end - 1) + 1
      else tokens += whitespaceCost(text, index, end)
      index = end
      continue
    }

    if (kind === DIGIT) {
      let digits = 0
      let end = index
      while (end < length) {
        const next = codePointAt(text, end)
        if (next < 128 ? ASCII_KIND[next] !== DIGIT : !isDigit(next)) break
        digits += next < 128 ? 1 : next < 0x800 ? 3 : 6
        end++
      }
      // Numbers split in groups of three digits; digits of other scripts cost one or two each.
      tokens += Math.ceil(digits / 3)
      index = end
      continue
    }

    if (kind === LETTER) {
      tokens += wordCost(text, index, word)
      countWord()
      index = word.end
      continue
    }

    // A single symbol right before a word is glued to it: `.com`, `_id`, `(self`.
    const after = index + (code > 0xffff ? 2 : 1)
    if (after < length && kindOf(codePointAt(text, after)) === LETTER) {
      punctuationRuns++
      tokens += prefixCost(code, isCapitalized(text, after)) + wordCost(text, after, word)
      countWord()
      index = word.end
      continue
    }
    punctuationRuns++
    tokens += symbolRunCost(text, index, word)
    index = word.end
  }
  if (words > 0) {
    const foreign = clamp(
      Math.max(
        (markedWords / words - FOREIGN_SHARE_FROM) / FOREIGN_SHARE_RAMP,
        (vowelEndingWords / words - VOWEL_ENDING_SHARE_FROM) / VOWEL_ENDING_SHARE_RAMP,
      ),
    )
    const prose = clamp(1 - (punctuationRuns / words - PROSE_PUNCTUATION_UP_TO) / PROSE_PUNCTUATION_RAMP)
    tokens += foreign * prose * foreignExtra
  }
  return Math.ceil(tokens)
}

function clamp(share: number): number {
  return Math.min(1, Math.max(0, share))
}

/** Whether the word at index starts with a capital followed by lower case (`Jobs`, not `JOBS`). */
function isCapitalized(text: string, index: number): boolean {
  return shapeOf(codePointAt(text, index)) === UPPER && index + 1 < text.length && shapeOf(codePointAt(text, index + 1)) === LOWER
}

/** What a single symbol glued to the front of a word adds to it. */
function prefixCost(code: number, beforeCapital: boolean): number {
  const floor = beforeCapital ? PREFIX_BEFORE_CAPITAL : 0
  if (code === 46 || code === 95 || code === 40) return Math.max(PREFIX_CHEAP, floor) // . _ (
  if (code === 45 || code === 47 || code === 91 || code === 64 || code === 61 || code === 37 || code === 60) return Math.max(PREFIX_MEDIUM, floor) // - / [ @ = % <
  return code < 128 ? 1 : symbolCost(code)
}

/** Marks that make up rules and underlines: `=`, `-`, `*`, `#`, `.`, `_`, `~`, `/`, `+`. */
function isRuleMark(code: number): boolean {
  return code === 61 || code === 45 || code === 42 || code === 35 || code === 46 || code === 95 || code === 126 || code === 47 || code === 43
}

/** Tokens of the run of symbols at index, with the line breaks right after it (`;\n` is one token), and where it ends. */
function symbolRunCost(text: string, start: number, result: { end: number }): number {
  let index = start
  let tokens = 0
  let previous = -1
  while (index < text.length) {
    const code = codePointAt(text, index)
    const kind = code < 128 ? ASCII_KIND[code] : kindOf(code)
    if (kind !== SYMBOL) break
    if (code >= 128) tokens += symbolCost(code)
    else if (previous < 0) tokens += 1
    else if (code !== previous) tokens += PUNCTUATION_FOLLOWING
    else tokens += isRuleMark(code) ? RULE_MARK_REPEATED : code === 96 ? BACKTICK_REPEATED : PUNCTUATION_REPEATED
    previous = code
    index += code > 0xffff ? 2 : 1
  }
  let breaks = index
  while (breaks < text.length && (text.charCodeAt(breaks) === 10 || text.charCodeAt(breaks) === 13)) breaks++
  if (breaks > index) tokens += whitespaceCost(text, index, breaks) - 1
  result.end = breaks
  return Math.max(1, tokens)
}

/** Per message: role and framing tokens the chat formats add around content. */
const MESSAGE_OVERHEAD = 4
/** A picture costs about this many input tokens at high detail on the major providers. */
const IMAGE_TOKENS = 1_600

/** Tokens of any JSON value: strings by their text, images by a fixed allowance, structure by its keys. */
export function estimateValueTokens(value: unknown): number {
  if (typeof value === 'string') return estimateTextTokens(value)
  if (typeof value === 'number' || typeof value === 'boolean') return 1
  if (Array.isArray(value)) return value.reduce((total: number, item) => total + estimateValueTokens(item), 0)
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>
    if (record.type === 'image_url' || record.type === 'image' || record.type === 'input_image') return IMAGE_TOKENS
    return Object.entries(record).reduce((total, [key, item]) => total + estimateTextTokens(key) + estimateValueTokens(item), 0)
  }
  return 0
}

/** Input tokens of a chat-shaped request: its messages (or system + messages) and its tool definitions. */
export function estimateChatInputTokens(request: { messages?: unknown; system?: unknown; tools?: unknown }): number {
  const messages = Array.isArray(request.messages) ? request.messages : []
  let tokens = 3 + messages.length * MESSAGE_OVERHEAD
  for (const message of messages) {
    if (message && typeof message === 'object') {
      const { role: _role, ...rest } = message as Record<string, unknown>
      tokens += estimateValueTokens(rest)
    }
  }
  if (request.system !== undefined) tokens += MESSAGE_OVERHEAD + estimateValueTokens(request.system)
  if (request.tools !== undefined) tokens += estimateValueTokens(request.tools)
  return tokens
}
