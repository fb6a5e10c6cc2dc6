import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose'
import { InvalidTokenError, ServiceUnavailableError, TokenScopeError } from '../errors/kinds'

/** The identity provider user tokens come from (TOLLGATE_OIDC_*, docs/configuration.md#configuration). */
export interface OidcConfig {
  issuer: string
  audience: string | undefined
  jwksUrl: string | undefined
  scope: string
}

export interface VerifiedUser {
  issuer: string
  subject: string
}

export interface UserTokenOptions {
  /** Minimum time between two JWKS downloads triggered by an unknown `kid`. */
  refetchCooldownMs?: number
  /** How long one discovery or JWKS download may take before the identity provider counts as unreachable. */
  fetchTimeoutMs?: number
}

/** Short: a verification waits for this download, and the client waits for the verification. */
const DEFAULT_FETCH_TIMEOUT_MS = 3000
/** Seconds a client is asked to wait when the identity provider could not be reached. */
const IDENTITY_PROVIDER_RETRY_AFTER_SECONDS = 5
/** Seconds of clock difference with the identity provider that are forgiven on exp and nbf. */
const CLOCK_TOLERANCE_SECONDS = 5
/** Three base64url segments: header, payload, signature (a JWE has five and is not a user token here). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/**
 * Checks user access tokens (JWTs) against the configured identity provider: signature by its
 * JWKS (downloaded once, downloaded again when a token names an unknown `kid`), issuer,
 * audience, expiry and the inference scope.
 *
 * A credential is read before anything is downloaded: one that is not a well-formed JWT, or
 * whose claims would be refused anyway, is refused without asking the identity provider, so
 * garbage costs nothing and is refused even while the identity provider is down. Only a
 * plausible token waits for the keys; if they cannot be fetched the answer is 503 (try again),
 * not a verdict on the token.
 */
export class UserTokenVerifier {
  private keySet: Promise<JWTVerifyGetKey> | undefined

  constructor(
    private readonly oidc: OidcConfig | undefined,
    private readonly options: UserTokenOptions = {},
  ) {}

  async verify(token: string): Promise<VerifiedUser> {
    const oidc = this.oidc
    if (!oidc) throw new InvalidTokenError('User tokens are not accepted: no identity provider is configured.')
    checkClaims(readUnverified(token), oidc, Date.now() / 1000)
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, await this.keys(oidc), {
        issuer: oidc.issuer,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }))
    } catch (error) {
      throw tokenError(error)
    }
    // Again on the verified claims: the first look was at claims nobody had vouched for yet.
    const subject = checkClaims(payload, oidc, Date.now() / 1000)
    if (!scopesOf(payload).includes(oidc.scope)) {
      throw new TokenScopeError(`The user token lacks the "${oidc.scope}" scope.`)
    }
    return { issuer: oidc.issuer, subject }
  }

  private keys(oidc: OidcConfig): Promise<JWTVerifyGetKey> {
    this.keySet ??= this.locateKeys(oidc).catch((error: unknown) => {
      // Discovery failed: the next token tries again rather than inheriting this failure.
      this.keySet = undefined
      throw error
    })
    return this.keySet
  }

  private async locateKeys(oidc: OidcConfig): Promise<JWTVerifyGetKey> {
    const timeoutMs = this.options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS
    const url = oidc.jwksUrl ?? (await discoverJwksUrl(oidc.issuer, timeoutMs))
    const remote = createRemoteJWKSet(new URL(url), { cooldownDuration: this.options.refetchCooldownMs ?? 30_000, timeoutDuration: timeoutMs })
    // Errors about the token (no key with its kid, an algorithm the keys do not support) pass
    // on; anything else happened while downloading the keys and says nothing about the token.
    return async (header, token) => {
      try {
        return await remote(header, token)
      } catch (error) {
        if (
          error instanceof joseErrors.JWKSNoMatchingKey ||
          error instanceof joseErrors.JWKSMultipleMatchingKeys ||
          error instanceof joseErrors.JOSENotSupported
        ) {
          throw error
        }
        throw identityProviderUnavailable(error)
      }
    }
  }
}

/**
 * The token's header and claims, before any signature is checked: a credential that is not a
 * compact JWS with a JSON header naming an algorithm and a JSON object payload is refused here.
 */
function readUnverified(token: string): JWTPayload {
  const notJwt = new InvalidTokenError('The user token is not a valid JWT.')
  if (!COMPACT_JWS.test(token)) throw notJwt
  let header: ReturnType<typeof decodeProtectedHeader>
  let payload: JWTPayload
  try {
    header = decodeProtectedHeader(token)
    payload = decodeJwt(token)
  } catch {
    throw notJwt
  }
  // An unsigned token ("none") or a shared-secret one (HS*) can never match a published key set.
  if (typeof header.alg !== 'string' || header.alg === 'none' || header.alg.startsWith('HS')) throw notJwt
  if (header.kid !== undefined && typeof header.kid !== 'string') throw notJwt
  if (header.crit !== undefined) throw notJwt
  return payload
}

/**
 * The checks that do not need the signature: expiry (required), issuer, subject and audience.
 * Returns the subject.
 */
function checkClaims(payload: JWTPayload, oidc: OidcConfig, nowSeconds: number): string {
  if (typeof payload.exp !== 'number' || !Number.isFinite(payload.exp))
    throw new InvalidTokenError('The user token has no expiry (exp): tokens that never expire are not accepted.')
  if (payload.exp + CLOCK_TOLERANCE_SECONDS <= nowSeconds) throw new InvalidTokenError('The user token has expired.')
  if (payload.iss !== oidc.issuer) throw new InvalidTokenError("The user token's iss claim is not accepted.")
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new InvalidTokenError('The user token has no subject.')
  // OpenID Connect bounds a subject at 255 characters: a longer one is no identity provider's.
  if (payload.sub.length > 255) throw new InvalidTokenError('The user token has a subject longer than 255 characters.')
  if (oidc.audience && !issuedFor(payload, oidc.audience)) throw new InvalidTokenError('The user token was issued for another client.')
  return payload.sub
}

/**
 * The token is for our client when its audience names it. Only a token without any audience
 * may name the client as the party it was issued to (`azp`, or `client_id` as RFC 9068 spells
 * it): a token whose audience is another API is for that API, whoever requested it.
 */
function issuedFor(payload: JWTPayload, audience: string): boolean {
  if (payload.aud !== undefined) {
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
    return audiences.includes(audience)
  }
  return payload.azp === audience || payload.client_id === audience
}

async function discoverJwksUrl(issuer: string, timeoutMs: number): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  let document: unknown
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    document = await response.json()
  } catch (error) {
    throw identityProviderUnavailable(error)
  }
  const jwksUri = typeof document === 'object' && document !== null && 'jwks_uri' in document ? document.jwks_uri : undefined
  if (typeof jwksUri !== 'string') throw identityProviderUnavailable(new Error('the discovery document has no jwks_uri'))
  return jwksUri
}

function identityProviderUnavailable(cause: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError('The identity provider could not be reached to verify the user token; try again shortly.', {
    retryAfterSeconds: IDENTITY_PROVIDER_RETRY_AFTER_SECONDS,
    cause,
  })
}

/** `scope` is a space-separated string (RFC 8693); some providers use an `scp` array instead. */
function scopesOf(payload: JWTPayload): string[] {
  const scopes: string[] = []
  if (typeof payload.scope === 'string') scopes.push(...payload.scope.split(' '))
  if (Array.isArray(payload.scp)) scopes.push(...payload.scp.filter((scope): scope is string => typeof scope === 'string'))
  if (typeof payload.scp === 'string') scopes.push(...payload.scp.split(' '))
  return scopes
}

/** What verification threw, as the client should see it: the identity provider's unavailability passes as it is. */
function tokenError(error: unknown): unknown {
  if (error instanceof ServiceUnavailableError) return error
  if (error instanceof joseErrors.JWTExpired) return new InvalidTokenError('The user token has expired.')
  if (error instanceof joseErrors.JWTClaimValidationFailed) return new InvalidTokenError(`The user token's ${error.claim} claim is not accepted.`)
  if (error instanceof joseErrors.JWKSNoMatchingKey) return new InvalidTokenError('The user token was signed by an unknown key.')
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new InvalidTokenError('The user token signature is not valid.')
  // Everything else jose throws is about the token (its form, its algorithm, its key's type):
  // the key download's own failures became ServiceUnavailableError where they happened.
  if (error instanceof joseErrors.JOSEError) return new InvalidTokenError('The user token is not a valid JWT.')
  return error
}
