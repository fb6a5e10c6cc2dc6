import type { Answer, StreamPart } from '../canonical/answer'
import type { Prompt } from '../canonical/prompt'
import type { Usage } from '../canonical/usage'
import type { VideoOutcome, VideoRequest } from '../canonical/video'
import type { GatewayError } from '../errors/gateway-error'
import type { SseEvent } from '../streaming/sse'
import type { JsonObject } from '../util/is-record'
import type { ProviderConfig, ProviderConfigProblem, ProviderCredential, ProviderEntry } from './provider-config'

/** The one way an adapter reaches the network: global fetch in production, a fake in tests. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>

/** One upstream request: which provider, which of its models, when to give up, and what else to send. */
export interface UpstreamTarget {
  provider: ProviderConfig
  /** The provider's own model id (a route's `model`). */
  model: string
  signal: AbortSignal
  /**
   * Headers the gateway adds to every request of the call (the trace's `traceparent`,
   * docs/operations.md#traces); empty when tracing is off. Never a credential: the adapter sets its own after these.
   */
  headers: Record<string, string>
  /**
   * Whether the model the call is billed at prices one-hour prompt-cache writes (its
   * `cacheWrite1h`): only then may a request ask the upstream for them. Absent is false.
   */
  oneHourCacheWrites?: boolean
}

/**
 * A client's request body passed on to an API that speaks the client's format: the gateway sets
 * a few named fields (the model, an output limit, stream options) and passes every other field
 * as it came, so its fields are free-form.
 */
export type NativeBody = JsonObject

/** What a native messages request keeps of the client's request besides its body. */
export interface MessagesPassthrough {
  /** The client's `anthropic-version`, when it sent one. */
  version: string | null
  /** The client's `anthropic-beta` list, when it sent one. */
  beta: string | null
  /** The client's query string (`?beta=true` from the SDKs' beta methods), or ''. */
  query: string
}

/** OpenAI's chat completions format, spoken natively: the client's body passes through. */
export interface ChatCapability {
  /**
   * `outputLimit`: the output tokens the hold was sized for, sent in the field the server reads
   * when the body names no limit of its own (docs/billing.md#holds).
   */
  send(target: UpstreamTarget, body: NativeBody, outputLimit?: number): Promise<Response>
  /** The canonical usage of a chat `usage` object; undefined when absent, UpstreamError when malformed. */
  usage(reported: unknown): Usage | undefined
}

/** Anthropic's messages format, spoken natively: the client's body passes through. */
export interface MessagesCapability {
  send(target: UpstreamTarget, body: NativeBody, passthrough: MessagesPassthrough): Promise<Response>
  /** The canonical usage of a messages `usage` object; undefined when absent, UpstreamError when malformed. */
  usage(reported: unknown): Usage | undefined
}

/** OpenAI's Responses API, spoken natively (a provider may still turn it off with `responsesApi: false`). */
export interface ResponsesCapability {
  send(target: UpstreamTarget, body: NativeBody): Promise<Response>
  /** The canonical usage of a Responses `usage` object; undefined when absent, UpstreamError when malformed. */
  usage(reported: unknown): Usage | undefined
}

/** Google's generateContent format, spoken natively: the client's body passes through. */
export interface GenerateContentCapability {
  /** To `:streamGenerateContent?alt=sse` when `stream`, else `:generateContent`. */
  send(target: UpstreamTarget, body: NativeBody, stream: boolean): Promise<Response>
  /** The canonical usage of a `usageMetadata` object; undefined when absent, UpstreamError when malformed. */
  usage(reported: unknown): Usage | undefined
}

/** A conversation reached by translation: the canonical prompt out, canonical answers and parts back. */
export interface TranslateCapability {
  send(target: UpstreamTarget, prompt: Prompt): Promise<Response>
  /** A whole answer in this API's format; UpstreamError when it is not one. */
  readAnswer(body: unknown): Answer
  /** A new reader of one streamed answer, fed its events as they come. */
  readStream(): StreamTranslator
}

/**
 * One streamed answer's events as canonical parts, fed one event at a time as the relay receives
 * them (no stream or promise per event). Both methods throw UpstreamError when the stream
 * reports an error, carries something malformed, or ends unfinished.
 */
export interface StreamTranslator {
  /** The parts one event makes: none, one or several. Events after the answer's end make none. */
  event(event: SseEvent): StreamPart[]
  /** The stream ended: its last parts (a `finish`, when the format finishes at its end). */
  end(): StreamPart[]
}

/** Embeddings in this API's own format: how /v1/embeddings reaches an API that is not OpenAI's. */
export interface EmbeddingsCapability {
  send(target: UpstreamTarget, texts: string[], dimensions: number | undefined): Promise<Response>
  /** The vectors of an answer, in input order; UpstreamError when the answer is not one. */
  readVectors(body: unknown): number[][]
}

/** OpenAI's own media endpoints, below the `/v1` base. */
export type MediaPath = '/embeddings' | '/images/generations' | '/audio/speech' | '/audio/transcriptions'

/** OpenAI's media endpoints spoken natively: the body (JSON text or a form) goes as given. */
export interface MediaCapability {
  send(target: UpstreamTarget, path: MediaPath, body: BodyInit): Promise<Response>
}

/** Video generation, a job the gateway waits for. */
export interface VideoCapability {
  /**
   * Submits the job, names it through `onStarted` as soon as the API gives it an id, polls
   * every `pollIntervalMs` until it is done, and fetches the clip. Errors before the job exists
   * are GatewayErrors (retryable ones may fail over). The target's signal stops the waiting
   * only: the job upstream runs on unless `cancel` stops it.
   */
  generate(target: UpstreamTarget, request: VideoRequest, onStarted: (jobId: string) => void): Promise<VideoOutcome>
  /**
   * Cancels a started job; resolves once the API confirmed it, rejects when the API refused or
   * could not be reached. Null where the API has no way to cancel: there a submitted job runs
   * to its end (and costs the operator) whether anyone waits or not.
   */
  cancel: ((target: UpstreamTarget, jobId: string) => Promise<void>) | null
}

/**
 * What the gateway needs of an upstream API. Each `providers/<api>/` folder implements it with
 * the capability groups its API has; a group is all there or absent. Nothing outside those
 * folders knows a provider's wire format.
 */
export interface ProviderAdapter {
  chat?: ChatCapability
  messages?: MessagesCapability
  responses?: ResponsesCapability
  generateContent?: GenerateContentCapability
  translate?: TranslateCapability
  embeddings?: EmbeddingsCapability
  media?: MediaCapability
  video?: VideoCapability
  /** The gateway error for an upstream error response (status and body text), the body kept as its cause. */
  mapError(status: number, body: string): GatewayError
  /**
   * The entry's credential, read where this API's entries name it: `apiKey`, or the variable
   * `apiKeyEnv` names (Vertex: `accessTokenEnv`, or a service-account key file, read at start so
   * a bad file stops it); a problem when what the entry names cannot be used.
   */
  readCredential(entry: ProviderEntry, env: Readonly<Record<string, string | undefined>>): ProviderCredential | ProviderConfigProblem
  /** What would turn on an entry whose credential is not set, for the start-up summary: the variable it reads (Vertex: or a key file). */
  missingCredential(entry: ProviderEntry): string
  /** What this API requires of a provider entry beyond the common fields; [] when it is well formed. */
  checkConfig(provider: ProviderConfig): ProviderConfigProblem[]
}
