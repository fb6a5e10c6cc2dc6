import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey']

interface SigningKey {
  kid: string
  privateKey: PrivateKey
  publicJwk: JWK
}

/**
 * A real OIDC identity provider on loopback: discovery document, JWKS, and RS256 tokens signed
 * with keys it can rotate. Counts JWKS downloads so caching can be asserted.
 */
export class IdentityProvider {
  readonly audience = 'tollgate-client'
  jwksRequests = 0
  /** Every request it received (discovery, JWKS, anything else). */
  requests = 0
  private published: SigningKey[] = []
  private server: ReturnType<typeof Bun.serve> | undefined

  get issuer(): string {
    if (!this.server) throw new Error('identity provider not started')
    return this.server.url.href.replace(/\/$/, '')
  }

  async start(): Promise<this> {
    this.published = [await newKey('key-1')]
    this.server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (request) => {
        this.requests++
        const path = new URL(request.url).pathname
        if (path === '/.well-known/openid-configuration') {
          return Response.json({ issuer: this.issuer, jwks_uri: `${this.issuer}/jwks` })
        }
        if (path === '/jwks') {
          this.jwksRequests++
          return Response.json({ keys: this.published.map((key) => key.publicJwk) })
        }
        return new Response('not found', { status: 404 })
      },
    })
    return this
  }

  stop(): void {
    this.server?.stop(true)
  }

  /** Publishes a new signing key beside the old ones; tokens signed with it carry its kid. */
  async rotate(kid: string): Promise<void> {
    this.published.push(await newKey(kid))
  }

  /** A valid token unless `claims` or `options` say otherwise (`withoutExpiry`, `withoutAudience` leave out exp, aud). */
  async token(
    claims: JWTPayload = {},
    options: { kid?: string; expiresIn?: string | number; unpublishedKey?: boolean; issuer?: string; withoutExpiry?: boolean; withoutAudience?: boolean } = {},
  ): Promise<string> {
    const key = options.unpublishedKey
      ? await newKey(options.kid ?? 'unpublished')
      : (this.published.find((candidate) => candidate.kid === (options.kid ?? candidate.kid)) ?? this.published[0])
    if (!key) throw new Error('no signing key')
    const token = new SignJWT({ scope: 'openid inference', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(options.issuer ?? this.issuer)
      .setSubject(claims.sub ?? 'user-1')
      .setIssuedAt()
    if (!options.withoutAudience) token.setAudience(claims.aud ?? this.audience)
    if (!options.withoutExpiry) token.setExpirationTime(options.expiresIn ?? '10m')
    return token.sign(key.privateKey)
  }

  /** A token whose signature was made by another key under a published kid. */
  async forgedToken(): Promise<string> {
    const impostor = await newKey(this.published[0]?.kid ?? 'key-1')
    return new SignJWT({ scope: 'inference' })
      .setProtectedHeader({ alg: 'RS256', kid: impostor.kid })
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setSubject('user-1')
      .setExpirationTime('10m')
      .sign(impostor.privateKey)
  }
}

async function newKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
}
