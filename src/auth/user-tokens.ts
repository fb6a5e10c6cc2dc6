import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import type { OidcConfig } from '../config'
import { InvalidTokenError, TokenScopeError, UpstreamError } from '../errors/kinds'

export interface VerifiedUser {
  issuer: string
  subject: string
}

type KeySet = ReturnType<typeof createRemoteJWKSet>

export interface UserTokenOptions {
  /** Minimum time between two JWKS downloads triggered by an unknown `kid`. */
  refetchCooldownMs?: number
}

/**
 * Checks user access tokens (JWTs) against the configured identity provider: signature by its
 * JWKS (downloaded once, downloaded again when a token names an unknown `kid`), issuer,
 * audience, expiry and the inference scope.
 */
export class UserTokenVerifier {
  private keySet: Promise<KeySet> | undefined

  constructor(
    private readonly oidc: OidcConfig | undefined,
    private readonly options: UserTokenOptions = {},
  ) {}

  async verify(token: string): Promise<VerifiedUser> {
    const oidc = this.oidc
    if (!oidc) throw new InvalidTokenError('User tokens are not accepted: no identity provider is configured.')
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, await this.keys(oidc), { issuer: oidc.issuer, clockTolerance: 5 }))
    } catch (error) {
      throw tokenError(error)
    }
    if (!payload.sub) throw new InvalidTokenError('The user token has no subject.')
    if (oidc.audience && !issuedFor(payload, oidc.audience)) {
      throw new InvalidTokenError('The user token was issued for another client.')
    }
    if (!scopesOf(payload).includes(oidc.scope)) {
      throw new TokenScopeError(`The user token lacks the "${oidc.scope}" scope.`)
    }
    return { issuer: oidc.issuer, subject: payload.sub }
  }

  private keys(oidc: OidcConfig): Promise<KeySet> {
    this.keySet ??= this.locateKeys(oidc).catch((error: unknown) => {
      this.keySet = undefined
      throw error
    })
    return this.keySet
  }

  private async locateKeys(oidc: OidcConfig): Promise<KeySet> {
    const url = oidc.jwksUrl ?? (await discoverJwksUrl(oidc.issuer))
    return createRemoteJWKSet(new URL(url), { cooldownDuration: this.options.refetchCooldownMs ?? 30_000, timeoutDuration: 5000 })
  }
}

async function discoverJwksUrl(issuer: string): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  let document: unknown
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    document = await response.json()
  } catch (error) {
    throw new UpstreamError('The identity provider could not be reached to verify the user token.', { cause: error })
  }
  const jwksUri = typeof document === 'object' && document !== null && 'jwks_uri' in document ? document.jwks_uri : undefined
  if (typeof jwksUri !== 'string') throw new UpstreamError('The identity provider publishes no jwks_uri.')
  return jwksUri
}

/** The token is for our client when its audience names it, or when it was issued to it (`azp`, `client_id`). */
function issuedFor(payload: JWTPayload, audience: string): boolean {
  const audiences = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : []
  return audiences.includes(audience) || payload.azp === audience || payload.client_id === audience
}

/** `scope` is a space-separated string (RFC 8693); some providers use an `scp` array instead. */
function scopesOf(payload: JWTPayload): string[] {
  const scopes: string[] = []
  if (typeof payload.scope === 'string') scopes.push(...payload.scope.split(' '))
  if (Array.isArray(payload.scp)) scopes.push(...payload.scp.filter((scope): scope is string => typeof scope === 'string'))
  if (typeof payload.scp === 'string') scopes.push(...payload.scp.split(' '))
  return scopes
}

function tokenError(error: unknown): Error {
  if (error instanceof joseErrors.JWTExpired) return new InvalidTokenError('The user token has expired.')
  if (error instanceof joseErrors.JWTClaimValidationFailed) return new InvalidTokenError(`The user token's ${error.claim} claim is not accepted.`)
  if (error instanceof joseErrors.JWKSNoMatchingKey) return new InvalidTokenError('The user token was signed by an unknown key.')
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new InvalidTokenError('The user token signature is not valid.')
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
    return new UpstreamError('The identity provider could not be reached to verify the user token.', { cause: error })
  }
  if (error instanceof UpstreamError) return error
  if (error instanceof joseErrors.JOSEError) return new InvalidTokenError('The user token is not a valid JWT.')
  // A network failure while fetching the JWKS.
  return new UpstreamError('The identity provider could not be reached to verify the user token.', { cause: error })
}
