import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { Tiktoken } from 'js-tiktoken/lite'
import o200k from 'js-tiktoken/ranks/o200k_base'
import { corpus, JSON_NUMBERS, repositorySamples } from './estimator-corpus'

/**
 * The reference tokenizer's (OpenAI's o200k, js-tiktoken at its locked version) count of a text,
 * from o200k-counts.json when it holds the text's SHA-256: loading the tokenizer and running it
 * over the corpus takes seconds, and its count of a given text never changes. A text the file
 * does not hold (a sample added or edited, or the README since) is counted by the tokenizer
 * itself, so a stale file only makes the test slower; `bun test/billing/o200k-counts.ts`
 * rewrites it for every sample of today.
 */

const COUNTS_FILE = `${import.meta.dir}/o200k-counts.json`
const stored: Record<string, number> = existsSync(COUNTS_FILE) ? JSON.parse(readFileSync(COUNTS_FILE, 'utf8')) : {}
let tokenizer: Tiktoken | undefined

/** How many texts the tokenizer itself had to count: the file is stale when this is above 0. */
export const tokenized = { texts: 0 }

const digestOf = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex')

const tokenize = (text: string) => {
  tokenizer ??= new Tiktoken(o200k)
  return tokenizer.encode(text).length
}

export function o200kCount(text: string): number {
  const count = stored[digestOf(text)]
  if (count !== undefined) return count
  tokenized.texts++
  return tokenize(text)
}

if (import.meta.main) {
  const texts = [...corpus(), ...repositorySamples()].map((sample) => sample.text).concat(JSON_NUMBERS.map(String))
  const counts = Object.fromEntries(texts.map((text) => [digestOf(text), tokenize(text)]))
  writeFileSync(COUNTS_FILE, `${JSON.stringify(counts, null, 1)}\n`)
  console.log(`${Object.keys(counts).length} counts written to ${COUNTS_FILE}`)
}
