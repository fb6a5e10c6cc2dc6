/**
 * The credentials the gateway itself holds, known by value: provider keys and access tokens, the
 * admin and metrics tokens, an OTLP collector's header values, the passwords in the database and
 * Redis URLs, and the tokens it obtains for a Vertex service account. An upstream may quote one
 * back in any shape ("Incorrect API key provided: <key>" is a 400 behind some compatible
 * servers), so the shape patterns of scrub-credentials.ts cannot be relied on for them: text
 * that reaches a client, a log line or a span has each value replaced wherever it appears, as
 * it is, percent-encoded (a key in a URL's query) or escaped inside a JSON string
 * (docs/operations.md#credentials-in-upstream-text).
 *
 * Holders register their values under a group of their own (a config, a service account), and
 * registering replaces the group's values; the one matcher is rebuilt only when a value
 * changes, so scrubbing costs one regular-expression pass over the text whatever the number of
 * secrets.
 */

/**
 * Values shorter than this are not scrubbed: a short "key" (`test`, `none`) is more likely a word
 * of ordinary text than a secret, and replacing it everywhere would mangle messages.
 */
export const MIN_SECRET_LENGTH = 8

export class KnownSecrets {
  private readonly groups = new Map<string, readonly string[]>()
  private matcher: RegExp | undefined

  /** The group's secrets from now on (values under MIN_SECRET_LENGTH and unset ones left out), replacing what it had. */
  set(group: string, values: Iterable<string | undefined>): void {
    const kept = [...new Set([...values].filter((value): value is string => value !== undefined && value.length >= MIN_SECRET_LENGTH))].sort()
    const before = this.groups.get(group)
    if (before ? sameValues(before, kept) : kept.length === 0) return
    if (kept.length === 0) this.groups.delete(group)
    else this.groups.set(group, kept)
    this.matcher = matcherOf(new Set([...this.groups.values()].flat()))
  }

  forget(group: string): void {
    this.set(group, [])
  }

  /** The text with every written form of every known secret replaced by `replacement`. */
  scrub(text: string, replacement: string): string {
    return this.matcher ? text.replace(this.matcher, () => replacement) : text
  }
}

/** The process's registry: the gateway's composition root fills it, every scrub reads it. */
export const knownSecrets = new KnownSecrets()

function sameValues(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((value, index) => value === right[index])
}

/** One alternation of every written form, longest first, so a longer form is never cut short by a shorter one it contains. */
function matcherOf(secrets: Set<string>): RegExp | undefined {
  const forms = new Set([...secrets].flatMap(writtenForms))
  if (forms.size === 0) return undefined
  const sources = [...forms].sort((left, right) => right.length - left.length).map(patternOf)
  return new RegExp(sources.join('|'), 'g')
}

/**
 * How a value appears in text the gateway reads: as it is; percent-encoded as a URL component, a
 * form field or a whole URL would carry it; and escaped inside a JSON string (with `/` escaped
 * too, as some encoders write it).
 */
function writtenForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1)
  return [secret, encodeURIComponent(secret), new URLSearchParams([['', secret]]).toString().slice(1), encodeURI(secret), json, json.replaceAll('/', '\\/')]
}

/** A form as a literal pattern; a percent escape matches in either case (`%2F` or `%2f`). */
function patternOf(form: string): string {
  return form
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/%([0-9A-F])([0-9A-F])/g, (_escape, high: string, low: string) => `%${eitherCase(high)}${eitherCase(low)}`)
}

function eitherCase(digit: string): string {
  return /[A-F]/.test(digit) ? `[${digit}${digit.toLowerCase()}]` : digit
}
