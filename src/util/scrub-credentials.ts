import { knownSecrets } from './known-secrets'

/**
 * Text from outside the gateway (an upstream's error message) or about its inside (an error
 * chain on its way to a log line) may quote a credential: OpenAI's 401 repeats the key it was
 * given, and a proxy in front of an upstream may echo an Authorization header. Every such text
 * passes through here before a client or a log reads it.
 *
 * First every credential the gateway holds is replaced by value, whatever it looks like
 * (known-secrets.ts); then anything shaped like a credential. The shapes are the credentials'
 * own, so ordinary error messages (model names, field paths, token counts, request ids) pass
 * unchanged; the tests hold real provider messages to that.
 */

export const REDACTED = '[redacted]'

/** Named shapes, most specific first: a later, looser one never sees what an earlier one took. */
const CREDENTIAL_PATTERNS: readonly (readonly [RegExp, string])[] = [
  // Gateway API keys, `tollgate_sk_<env>_<secret>` (and any service word in front of `_sk_`).
  [/\b[A-Za-z0-9]+_sk_[A-Za-z0-9_]+/g, REDACTED],
  // OpenAI (`sk-`, `sk-proj-`, masked as `sk-proj-abc***wxyz`) and Anthropic (`sk-ant-api03-`) keys.
  [/\bsk-[A-Za-z0-9][A-Za-z0-9_*-]*/g, REDACTED],
  // Google API keys: `AIza` and 35 more characters.
  [/\bAIza[A-Za-z0-9_-]{20,}/g, REDACTED],
  // Google OAuth access tokens (Vertex AI).
  [/\bya29\.[A-Za-z0-9._-]*[A-Za-z0-9_-]/g, REDACTED],
  // JWTs (user tokens, service-account assertions): a base64url JSON header, payload, signature.
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REDACTED],
  // Hex digests and hex secrets (an API key's SHA-256 is 64 of these).
  [/\b[0-9a-fA-F]{32,}\b/g, REDACTED],
]

/** An Authorization header's value, whatever the token looks like; the scheme stays readable. */
// A sentence's full stop after the token is not part of it.
const AUTHORIZATION_VALUE = /\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/=-]*[A-Za-z0-9_~+/=-])/gi

/** "a bearer token", "Basic authentication": prose, not a credential (which has digits, capitals or symbols, or length). */
const PLAIN_WORD = /^[a-z]{1,19}$/

/** A run of base64 or base64url characters long enough to be a secret; random ones are told apart by entropy below. */
const LONG_TOKEN = /[A-Za-z0-9+/=_-]{32,}/g

/**
 * Random base64 of this length carries close to 5 bits a character; identifiers, paths and
 * words in long runs stay near 4 or below (and hex, at most 4, is left to the pattern above).
 */
const SECRET_ENTROPY_BITS = 4

export function scrubCredentials(text: string): string {
  let scrubbed = knownSecrets.scrub(text, REDACTED)
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) scrubbed = scrubbed.replace(pattern, replacement)
  scrubbed = scrubbed.replace(AUTHORIZATION_VALUE, (whole, scheme: string, space: string, token: string) =>
    PLAIN_WORD.test(token) ? whole : `${scheme}${space}${REDACTED}`,
  )
  return scrubbed.replace(LONG_TOKEN, (token) => (looksRandom(token) ? REDACTED : token))
}

function looksRandom(token: string): boolean {
  if (!/[0-9]/.test(token) || !/[A-Z]/.test(token) || !/[a-z]/.test(token)) return false
  return shannonEntropy(token) >= SECRET_ENTROPY_BITS
}

function shannonEntropy(text: string): number {
  const counts = new Map<string, number>()
  for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1)
  let bits = 0
  for (const count of counts.values()) {
    const share = count / text.length
    bits -= share * Math.log2(share)
  }
  return bits
}
