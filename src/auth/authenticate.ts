import { InvalidApiKeyError, KeyScopeError } from '../errors/kinds'
import { looksLikeApiKey } from './api-key-secret'
import type { ApiKeyRow, ApiKeyStore } from './api-keys'
import type { EndpointRule, KeyScope } from './endpoint-rules'
import { providerKeyRefusal } from './provider-keys'
import type { RateLimiter, RateLimitHeaders } from './rate-limit'
import type { UserTokenVerifier } from './user-tokens'
import type { UserRow, UserStore } from './users'

/** Who is calling: decided once per request from the endpoint's rule and the headers. */
export type Caller = { kind: 'anonymous' } | { kind: 'api-key'; key: ApiKeyRow } | { kind: 'user'; user: UserRow }

const ANONYMOUS: Caller = { kind: 'anonymous' }
const NO_QUERY = new URLSearchParams()

export class Authenticator {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly tokens: UserTokenVerifier,
    private readonly users: UserStore,
    private readonly rateLimiter: RateLimiter,
  ) {}

  /**
   * The caller of a request with `headers` to an endpoint with `rule`, refused when it may not
   * call; an API key's rate-limit headers, which its answer carries, go to `onLimits`. The caller
   * goes to `onIdentified` as soon as its credential is verified, before its scopes and rate
   * limits are checked, so a refusal of those still names who was refused. `query` is the
   * request's query string, read only where the rule takes a key there (`google-api-key`).
   */
  async authenticate(
    rule: EndpointRule,
    headers: Headers,
    onLimits: (headers: RateLimitHeaders) => void = () => undefined,
    onIdentified: (caller: Caller) => void = () => undefined,
    query: URLSearchParams = NO_QUERY,
  ): Promise<Caller> {
    if (rule.credentials === 'public') return ANONYMOUS
    const authorization = headers.get('authorization')
    const apiKeyHeader = headers.get('x-api-key')
    const googleKey = rule.credentials === 'google-api-key' ? (headers.get('x-goog-api-key') ?? query.get('key')) : null
    let caller: Caller
    if (authorization !== null) {
      caller = await this.identify(bearerCredential(authorization), rule)
    } else if (googleKey !== null) {
      caller = await this.verifyApiKey(googleKey)
    } else if (apiKeyHeader !== null && rule.credentials === 'bearer-or-x-api-key') {
      caller = await this.verifyApiKey(apiKeyHeader)
    } else if (rule.credentials === 'optional-bearer') {
      return ANONYMOUS
    } else if (rule.credentials === 'google-api-key') {
      throw new InvalidApiKeyError('No credential was sent: use "x-goog-api-key: <key>", the key query parameter, or "Authorization: Bearer <key>".')
    } else if (apiKeyHeader !== null) {
      throw new InvalidApiKeyError('This endpoint takes its API key in "Authorization: Bearer <key>", not in x-api-key.')
    } else {
      throw new InvalidApiKeyError('No credential was sent: use "Authorization: Bearer <key>".')
    }
    onIdentified(caller)
    if (rule.scope) requireKeyScope(caller, rule.scope)
    if (caller.kind === 'api-key') onLimits(await this.rateLimiter.checkRequest(caller.key))
    if (rule.free) await this.rateLimiter.checkFree(callerId(caller))
    return caller
  }

  /** A key sent in a header or parameter of its own (not Bearer): a gateway API key, never a provider's. */
  private async verifyApiKey(sent: string): Promise<Caller> {
    const credential = sent.trim()
    const refusal = providerKeyRefusal(credential)
    if (refusal) throw refusal
    return { kind: 'api-key', key: await this.keys.verify(credential) }
  }

  private async identify(credential: string, rule: EndpointRule): Promise<Caller> {
    if (looksLikeApiKey(credential)) return { kind: 'api-key', key: await this.keys.verify(credential) }
    const refusal = providerKeyRefusal(credential)
    if (refusal) throw refusal
    if (rule.apiKeyOnly) throw new InvalidApiKeyError('This endpoint needs an API key; user tokens are not accepted here.')
    const verified = await this.tokens.verify(credential)
    return { kind: 'user', user: await this.users.findOrCreate(verified.issuer, verified.subject) }
  }
}

/**
 * 403 insufficient_scope unless the caller may use `scope`: for an endpoint whose scope depends on
 * what is asked of it (one Gemini path serves chat and embeddings), checked by its handler.
 */
export function requireKeyScope(caller: Caller, scope: KeyScope): void {
  if (caller.kind === 'api-key' && caller.key.scopes && !caller.key.scopes.includes(scope)) {
    throw new KeyScopeError(`This API key's scopes do not include "${scope}".`)
  }
}

/** The key or user a caller's limits are counted for. */
export function callerId(caller: Caller): string {
  return caller.kind === 'api-key' ? caller.key.id : caller.kind === 'user' ? caller.user.id : 'anonymous'
}

function bearerCredential(header: string): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match?.[1]) throw new InvalidApiKeyError('The Authorization header must be "Bearer <credential>".')
  return match[1]
}
