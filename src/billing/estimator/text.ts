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

import {
  ASCII_KIND,
  codePointAt,
  DIGIT,
  FOLLOWER_MASKS,
  isAlphabetic,
  isAnyWhitespace,
  isDigit,
  isDigitAt,
  kindOf,
  LETTER,
  LOWER,
  letterCost,
  NEWLINE,
  OTHER_LETTER,
  OTHER_WORD_LENGTH,
  OTHER_WORD_LETTER,
  SPACE,
  SYMBOL,
  shapeOf,
  symbolCost,
  UPPER,
  whitespaceCost,
} from './characters'

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

const CHAR_LF = 10
const CHAR_CR = 13
const CHAR_SPACE = 32
const CHAR_BACKTICK = 96

/** A lookup of the ASCII characters in `chars`: `set[code] === 1`. */
function asciiSet(chars: string): Uint8Array {
  const set = new Uint8Array(128)
  for (const char of chars) set[char.charCodeAt(0)] = 1
  return set
}

/** Symbols glued to the front of a word that add nothing to it (`.env`, `_private`, `(word`). */
const CHEAP_PREFIXES = asciiSet('._(')
/** Symbols glued to the front of a word that add half a token (`-flag`, `/path`, `[word`, `@user`, `=value`, `%d`, `<tag`). */
const MEDIUM_PREFIXES = asciiSet('-/[@=%<')
/** Marks that make up rules and underlines (`====`, `----`, `~~~~`). */
const RULE_MARKS = asciiSet('=-*#._~/+')
/** The word endings VOWEL_ENDING_SHARE_FROM counts, as a mask of letters (a = bit 0): a, i, o and u. */
const VOWEL_ENDINGS = ['a', 'i', 'o', 'u'].reduce((mask, letter) => mask | (1 << (letter.charCodeAt(0) - 97)), 0)

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
  result.vowelEnding = previousLetter >= 0 && (VOWEL_ENDINGS & (1 << previousLetter)) !== 0
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
      if (end < length && last !== CHAR_LF && last !== CHAR_CR) {
        const next = kindOf(codePointAt(text, end))
        if (next === LETTER || (next === SYMBOL && last === CHAR_SPACE)) {
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
      if (end < length && last !== CHAR_LF && last !== CHAR_CR && end - 1 > index) tokens += whitespaceCost(text, index, end - 1) + 1
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
      Math.max((markedWords / words - FOREIGN_SHARE_FROM) / FOREIGN_SHARE_RAMP, (vowelEndingWords / words - VOWEL_ENDING_SHARE_FROM) / VOWEL_ENDING_SHARE_RAMP),
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
  if (CHEAP_PREFIXES[code] === 1) return Math.max(PREFIX_CHEAP, floor)
  if (MEDIUM_PREFIXES[code] === 1) return Math.max(PREFIX_MEDIUM, floor)
  return code < 128 ? 1 : symbolCost(code)
}

function isRuleMark(code: number): boolean {
  return RULE_MARKS[code] === 1
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
    else tokens += isRuleMark(code) ? RULE_MARK_REPEATED : code === CHAR_BACKTICK ? BACKTICK_REPEATED : PUNCTUATION_REPEATED
    previous = code
    index += code > 0xffff ? 2 : 1
  }
  let breaks = index
  while (breaks < text.length && (text.charCodeAt(breaks) === CHAR_LF || text.charCodeAt(breaks) === CHAR_CR)) breaks++
  if (breaks > index) tokens += whitespaceCost(text, index, breaks) - 1
  result.end = breaks
  return Math.max(1, tokens)
}
