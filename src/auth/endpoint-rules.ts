/** What a key's explicit `scopes` can grant (docs/api.md#key-scopes). */
export const KEY_SCOPES = ['chat', 'responses', 'embeddings', 'images', 'videos', 'messages', 'audio', 'wallet', 'pricing'] as const
export type KeyScope = (typeof KEY_SCOPES)[number]

/**
 * How an endpoint takes credentials (docs/api.md#authentication-per-route):
 * - `bearer`: an API key or user token in `Authorization: Bearer` is required; `x-api-key` is refused.
 * - `bearer-or-x-api-key`: either header; the messages-client style is welcome.
 * - `optional-bearer`: anonymous callers are served; a Bearer credential, when sent, is checked and used.
 * - `google-api-key`: an API key in `x-goog-api-key` or the `key` query parameter, as Google's
 *   clients send it, or an API key or user token in `Authorization: Bearer`; `x-api-key` is refused.
 * - `public`: credentials are ignored.
 */
export type CredentialRule = 'bearer' | 'bearer-or-x-api-key' | 'google-api-key' | 'optional-bearer' | 'public'

export interface EndpointRule {
  method: 'GET' | 'POST'
  /** The endpoint's path template as the router names it (`*` is the rest of the path). */
  path: string
  credentials: CredentialRule
  /** The key scope the endpoint needs; a key without explicit scopes may use every endpoint. */
  scope?: KeyScope
  /**
   * The endpoint bills, but the scope it needs depends on what is asked (one Gemini path serves
   * chat and embeddings): its handler checks the scope (requireKeyScope).
   */
  scopedByHandler?: true
  /** Only API keys: a user token is refused with invalid_api_key. */
  apiKeyOnly?: boolean
  /** Billed to nobody: its callers are held to the free endpoints' limits (auth/rate-limit.ts). */
  free?: boolean
}

/** The one table every /v1 endpoint consults before its handler runs. */
export const ENDPOINT_RULES: readonly EndpointRule[] = [
  { method: 'POST', path: '/v1/chat/completions', credentials: 'bearer', scope: 'chat' },
  { method: 'POST', path: '/v1/responses', credentials: 'bearer', scope: 'responses' },
  { method: 'POST', path: '/v1/embeddings', credentials: 'bearer', scope: 'embeddings' },
  { method: 'POST', path: '/v1/images/generations', credentials: 'bearer', scope: 'images' },
  { method: 'POST', path: '/v1/videos/generations', credentials: 'bearer', scope: 'videos' },
  { method: 'POST', path: '/v1/messages', credentials: 'bearer-or-x-api-key', scope: 'messages' },
  { method: 'POST', path: '/v1/messages/count_tokens', credentials: 'bearer-or-x-api-key', scope: 'messages', free: true },
  { method: 'POST', path: '/v1/audio/transcriptions', credentials: 'bearer-or-x-api-key', scope: 'audio' },
  { method: 'POST', path: '/v1/audio/speech', credentials: 'bearer-or-x-api-key', scope: 'audio' },
  // The Gemini API: one path for every model method (`{model}:generateContent`, `:countTokens`,
  // `:embedContent`, ...); the endpoint checks the scope its method needs (chat or embeddings).
  { method: 'POST', path: '/v1beta/models/*', credentials: 'google-api-key', scopedByHandler: true },
  { method: 'GET', path: '/v1beta/models', credentials: 'google-api-key' },
  { method: 'GET', path: '/v1beta/models/*', credentials: 'google-api-key' },
  { method: 'GET', path: '/v1/models', credentials: 'optional-bearer' },
  { method: 'GET', path: '/v1/models/*', credentials: 'optional-bearer' },
  { method: 'GET', path: '/v1/models/coding', credentials: 'public' },
  { method: 'GET', path: '/v1/wallet', credentials: 'bearer', scope: 'wallet', apiKeyOnly: true, free: true },
  { method: 'GET', path: '/v1/usage', credentials: 'bearer', scope: 'wallet', apiKeyOnly: true, free: true },
  { method: 'GET', path: '/v1/pricing', credentials: 'bearer', scope: 'pricing', free: true },
  { method: 'GET', path: '/v1/healthz', credentials: 'public' },
  { method: 'GET', path: '/v1/readyz', credentials: 'public' },
]

const byEndpoint = new Map(ENDPOINT_RULES.map((rule) => [`${rule.method} ${rule.path}`, rule]))

/** The rule of an endpoint; HEAD is answered by the GET endpoint of the same path (the router adds it), so it follows the GET rule. */
export function ruleFor(method: string, pathTemplate: string): EndpointRule | undefined {
  return byEndpoint.get(`${method === 'HEAD' ? 'GET' : method} ${pathTemplate}`)
}
