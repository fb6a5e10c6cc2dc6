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

/** Named shapes of keys and tokens, most specific first: a later, looser one never sees what an earlier one took. */
const KEY_SHAPES: readonly RegExp[] = [
  // Gateway API keys, `tollgate_sk_<env>_<secret>` (and any service word in front of `_sk_`).
  /\b[A-Za-z0-9]+_sk_[A-Za-z0-9_]+/g,
  // OpenAI (`sk-`, `sk-proj-`, masked as `sk-proj-abc***wxyz`) and Anthropic (`sk-ant-api03-`) keys.
  /\bsk-[A-Za-z0-9][A-Za-z0-9_*-]*/g,
  // Google API keys: `AIza` and 35 more characters.
  /\bAIza[A-Za-z0-9_-]{20,}/g,
  // Google OAuth access tokens (Vertex AI).
  /\bya29\.[A-Za-z0-9._-]*[A-Za-z0-9_-]/g,
  // JWTs (user tokens, service-account assertions): a base64url JSON header, payload, signature.
  /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g,
]

/** Hex digests and hex secrets (an API key's SHA-256 is 64 of these). */
const HEX_SECRET = /\b[0-9a-fA-F]{32,}\b/g

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

/**
 * A file path: absolute (`/srv/gateway/configs/Tollgate-EU-West1/models.json`), from the home or
 * working directory (`~/…`, `./…`, `../…`), or relative with a file extension
 * (`configs/models.json`), standing on its own (after a space, a quote, `=`, a bracket or a comma,
 * and before the end of its value). Its segments are words an operator chose, which the shape
 * patterns below would take for keys (`sk-tools`, `Tollgate-EU-West1`): a path is judged segment by
 * segment instead (pathSegmentIsSecret). A URL's path follows its host, never a delimiter, so it is
 * not one.
 */
const FILE_PATH = /(?<![^\s"'=([{,])(?:(?:~|\.{1,2})?(?:\/[\w.@-]+)+\/?|(?:[\w@-][\w.@-]*\/)+[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8})(?=$|[\s"'),:;!?>\]}])/g

/** After these an absolute-looking run is an Authorization header's token, not a path. */
const AUTHORIZATION_SCHEME_BEFORE = /\b(Bearer|Basic)\s+$/i

/**
 * Stands for a path while the shapes are looked for in the rest: not a word character, not a
 * token character, so no shape matches across it, and paths come back in order.
 */
const PATH_PLACEHOLDER = '\uE000'

export function scrubCredentials(text: string): string {
  const known = knownSecrets.scrub(text, REDACTED)
  const paths: string[] = []
  // One pass of every shape over the whole text, the paths set aside (a pass per gap would cost
  // a regular expression run per path: a long text of many short paths would take seconds). A
  // text that holds the placeholder already is scrubbed whole, its paths too: more, never less.
  const withoutPaths = known.includes(PATH_PLACEHOLDER)
    ? known
    : known.replace(FILE_PATH, (path: string, offset: number) => {
        if (AUTHORIZATION_SCHEME_BEFORE.test(known.slice(Math.max(0, offset - 20), offset))) return path
        paths.push(path)
        return PATH_PLACEHOLDER
      })
  const scrubbed = scrubShapes(withoutPaths)
  if (paths.length === 0) return scrubbed
  let next = 0
  return scrubbed.replaceAll(PATH_PLACEHOLDER, () => scrubPath(paths[next++] ?? ''))
}

/** Text that is not a file path: every credential shape goes. */
function scrubShapes(text: string): string {
  let scrubbed = text
  for (const pattern of [...KEY_SHAPES, HEX_SECRET]) scrubbed = scrubbed.replace(pattern, REDACTED)
  scrubbed = scrubbed.replace(AUTHORIZATION_VALUE, (whole, scheme: string, space: string, token: string) =>
    PLAIN_WORD.test(token) ? whole : `${scheme}${space}${REDACTED}`,
  )
  return scrubbed.replace(LONG_TOKEN, (token) => (looksRandom(token) ? REDACTED : token))
}

function scrubPath(path: string): string {
  return path
    .split('/')
    .map((segment) => (pathSegmentIsSecret(segment) ? REDACTED : segment))
    .join('/')
}

/**
 * Only a segment a directory's name could not be mistaken for is taken out: a whole key of a
 * known shape (real ones are far longer than a name such as `sk-tools`), or a long random run.
 * Names join words with `-`, `_` and `.` (`Prod-Cluster-AP-Southeast2-Zone3B`), which would pass
 * for random by their letters alone: a segment is judged by its longest unbroken piece.
 */
const MIN_KEY_SEGMENT_LENGTH = 20

/**
 * The key and token shapes, each matching a whole segment. Not the hex digests: a path's hex
 * segment is a content address (a layer, a commit), not a key's hash.
 */
const WHOLE_KEY_SHAPES = KEY_SHAPES.map((shape) => new RegExp(`^(?:${shape.source})$`))

function pathSegmentIsSecret(segment: string): boolean {
  if (segment.length < MIN_KEY_SEGMENT_LENGTH) return false
  if (WHOLE_KEY_SHAPES.some((shape) => shape.test(segment))) return true
  const longestPiece = segment.split(/[-_.]/).reduce((longest, piece) => (piece.length > longest.length ? piece : longest), '')
  return longestPiece.length >= MIN_KEY_SEGMENT_LENGTH && looksRandom(longestPiece)
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
