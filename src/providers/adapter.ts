import type { ProviderConfig } from '../config'
import type { GatewayError } from '../errors/gateway-error'
import type { Answer, StreamPart } from '../spec/answer'
import type { Prompt } from '../spec/prompt'
import type { VideoOutcome, VideoRequest } from '../spec/video'
import type { Usage } from '../spec/usage'

/** One upstream request: which provider, which of its models, and when to give up. */
export interface UpstreamTarget {
  provider: ProviderConfig
  /** The provider's own model id (a route's `model`). */
  model: string
  signal: AbortSignal
}

/** What a native messages request keeps of the client's request besides its body. */
export interface MessagesPassthrough {
  /** The client's `anthropic-version`, when it sent one. */
  version: string | null
  /** The client's `anthropic-beta` list, when it sent one. */
  beta: string | null
  /** The client's query string (`?beta=true` from the SDKs' beta methods), or ''. */
  query: string
}

/**
 * What the gateway needs of an upstream API. Each `providers/<api>/` folder implements it;
 * nothing outside those folders knows a provider's wire format.
 */
export interface ProviderAdapter {
  /**
   * Sends an OpenAI-format chat completions body. Present only where that is the API's native
   * format (the body passes through); other APIs are reached by translation.
   */
  sendChatCompletion?(target: UpstreamTarget, body: Record<string, unknown>): Promise<Response>
  /** The canonical usage of an OpenAI-format chat `usage` object, or undefined when absent. */
  chatUsage?(usage: unknown): Usage | undefined
  /** Sends a Responses API body, passed through: present where the API has that endpoint (a provider may still turn it off with `responsesApi: false`). */
  sendResponses?(target: UpstreamTarget, body: Record<string, unknown>): Promise<Response>
  /** The canonical usage of a Responses API `usage` object. */
  responsesUsage?(usage: unknown): Usage | undefined
  /** Sends an Anthropic messages body, passed through: present where that format is native. */
  sendMessages?(target: UpstreamTarget, body: Record<string, unknown>, passthrough: MessagesPassthrough): Promise<Response>
  /** The canonical usage of a messages `usage` object, or undefined when absent. */
  messagesUsage?(usage: unknown): Usage | undefined
  /**
   * Sends a request to one of OpenAI's own endpoints (`path` below the `/v1` base: `/embeddings`,
   * `/images/generations`, `/audio/speech`, `/audio/transcriptions`), body as given (JSON or a form).
   */
  sendOpenAiRequest?(target: UpstreamTarget, path: string, body: BodyInit): Promise<Response>
  /** Embeds texts in this API's own format: how /v1/embeddings reaches a non-OpenAI API. */
  sendEmbeddings?(target: UpstreamTarget, texts: string[], dimensions: number | undefined): Promise<Response>
  /** The vectors of an embeddings answer in this API's format, in input order. */
  readEmbeddings?(body: unknown): number[][]
  /**
   * Generates a video and waits for it: submits the job, names it through `onStarted` as soon
   * as the API gives it an id, polls every `pollIntervalMs` until it is done, and fetches the
   * clip. Errors before the job exists are GatewayErrors (retryable ones may fail over). The
   * target's signal stops the waiting only: the job upstream runs on unless cancelVideoJob
   * stops it.
   */
  generateVideo?(target: UpstreamTarget, request: VideoRequest, onStarted: (jobId: string) => void): Promise<VideoOutcome>
  /**
   * Cancels a started video job upstream; resolves once the API confirmed it, rejects when the
   * API refused or could not be reached. Absent where the API has no way to cancel: there a
   * submitted job runs to its end (and costs the operator) whether anyone waits or not.
   */
  cancelVideoJob?(target: UpstreamTarget, jobId: string): Promise<void>
  /** Sends a canonical prompt in this API's own format: how a surface reaches it by translation. */
  sendPrompt?(target: UpstreamTarget, prompt: Prompt): Promise<Response>
  /** Reads a whole answer in this API's format. */
  readAnswer?(body: unknown): Answer
  /** Reads a streamed answer in this API's format as canonical parts; throws when the stream breaks. */
  readStream?(body: ReadableStream<Uint8Array>): AsyncIterable<StreamPart>
  /** The gateway error for an upstream error response (status and body text). */
  mapError(status: number, body: string): GatewayError
}
