import { type Static, Type } from '@sinclair/typebox'

/**
 * A provider entry of the config file (docs/configuration.md#config-file): which upstream API it
 * speaks, where, and with which credential. What one API requires beyond the common fields, its
 * adapter checks (ProviderAdapter.checkConfig).
 */
export const ProviderSchema = Type.Object(
  {
    api: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('gemini'), Type.Literal('vertex')]),
    baseUrl: Type.String({ pattern: '^https?://[^\\s]+$' }),
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    apiKeyEnv: Type.Optional(Type.String({ minLength: 1 })),
    project: Type.Optional(Type.String({ minLength: 1 })),
    location: Type.Optional(Type.String({ minLength: 1 })),
    accessTokenEnv: Type.Optional(Type.String({ minLength: 1 })),
    /** Vertex: a Google service-account key (JSON) the gateway signs its own access tokens with. */
    serviceAccountKeyFile: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * Vertex: the gs:// prefixes client images may name (`gs://my-bucket/uploads/`). Veo reads
     * such an object with the operator's credentials, so any other bucket is refused.
     */
    gcsUriPrefixes: Type.Optional(Type.Array(Type.String({ pattern: '^gs://[^/]+/' }))),
    /** How often a long-running job (a video) is polled. */
    pollIntervalMs: Type.Optional(Type.Integer({ minimum: 10 })),
    /** How long a whole long-running job may take before it is given up (504, not billed). */
    jobTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * Whether an `openai` provider serves OpenAI's Responses API (`/responses`). Unset: it is
     * tried natively, and a 404 or 405 there switches the provider to translation through chat
     * completions for the rest of the process. `true`: always native (a 404 is the client's
     * error). `false`: always translated, `/responses` never called.
     */
    responsesApi: Type.Optional(Type.Boolean()),
    /** How long to wait for an upstream's response headers before trying the next route. */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** How long a stream may stay silent, once its headers came, before the gateway ends it. */
    streamIdleTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * How long a route of this provider is skipped after failing 3 times in a row, in seconds
     * (fractions allowed); 0 never skips it (docs/configuration.md#routes-and-failover).
     */
    cooldownSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
  },
  { additionalProperties: false },
)

export type ProviderEntry = Static<typeof ProviderSchema>

/** A provider with its credential resolved from the environment. */
export interface ProviderConfig extends ProviderEntry {
  name: string
  /** The API key or access token, when the provider takes one and it is set. */
  credential: string | undefined
  /** Vertex: the service account whose key signs access tokens, when one is configured. */
  serviceAccount: ServiceAccount | undefined
  /** Whether the provider can be called: its credential is set, or it needs none. */
  configured: boolean
  pollIntervalMs: number
  timeoutMs: number
  jobTimeoutMs: number
  streamIdleTimeoutMs: number
  cooldownSeconds: number
}

/** A Google service-account key: the fields token signing needs, read from its file at start. */
export interface ServiceAccount {
  clientEmail: string
  privateKey: string
  tokenUri: string
}

/** A provider entry's credential, as its API reads it (ProviderAdapter.readCredential). */
export interface ProviderCredential {
  /** The API key or access token: the entry's own, or the value of the variable it names, when set. */
  credential: string | undefined
  /** Vertex: the service account whose key signs access tokens, when the entry names a key file. */
  serviceAccount: ServiceAccount | undefined
  /** Whether the entry names a credential at all: one that names none needs none (a local server). */
  named: boolean
}

/** One problem with a provider's config entry: the field under the entry, and what is wrong. */
export interface ProviderConfigProblem {
  field: string
  message: string
}
