import { Value } from '@sinclair/typebox/value'
import { importPKCS8, SignJWT } from 'jose'
import { UpstreamError } from '../../errors/kinds'
import { knownSecrets } from '../../util/known-secrets'
import type { Fetch } from '../adapter'
import type { ProviderConfig, ServiceAccount } from '../provider-config'
import { TokenResponse } from './api'

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
/** Renew this long before a token expires, so none is used in its last minute. */
const RENEW_EARLY_MS = 60_000

const cached = new Map<string, { token: string; until: number }>()

/**
 * A bearer token for Vertex AI: the configured access token as it is, or one obtained from a
 * service-account key (OAuth 2.0 JWT bearer grant, RFC 7523: an RS256 assertion signed with
 * the key, exchanged at the key's token_uri) and reused until shortly before it expires.
 */
export async function vertexAccessToken(fetch: Fetch, provider: ProviderConfig, signal: AbortSignal): Promise<string | undefined> {
  if (provider.credential) return provider.credential
  const account = provider.serviceAccount
  if (!account) return undefined
  const known = cached.get(account.clientEmail)
  if (known && known.until > Date.now()) return known.token
  const fresh = await exchange(fetch, account, signal)
  cached.set(account.clientEmail, fresh)
  // Scrubbed by value from upstream text like every credential the gateway holds (util/known-secrets.ts):
  // the token, the assertion that obtained it, and the token it replaces, which requests in flight may still carry.
  knownSecrets.set(`vertex service account ${account.clientEmail}`, [fresh.token, fresh.assertion, known?.token])
  return fresh.token
}

async function exchange(fetch: Fetch, account: ServiceAccount, signal: AbortSignal): Promise<{ token: string; until: number; assertion: string }> {
  const now = Math.floor(Date.now() / 1000)
  let assertion: string
  try {
    assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(account.clientEmail)
      .setAudience(account.tokenUri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await importPKCS8(account.privateKey, 'RS256'))
  } catch (error) {
    throw new UpstreamError('The Vertex service-account key cannot sign tokens.', { cause: error })
  }
  const response = await fetch(account.tokenUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }),
    signal,
  })
  const body: unknown = await response.json().catch(() => undefined)
  if (!response.ok || !Value.Check(TokenResponse, body)) {
    throw new UpstreamError(`Vertex AI refused the service account's token request (HTTP ${response.status}).`)
  }
  const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : 3600) * 1000
  return { token: body.access_token, until: Date.now() + lifetimeMs - RENEW_EARLY_MS, assertion }
}
