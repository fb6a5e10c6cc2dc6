import type { Caller } from '../auth/authenticate'
import type { Answer, StreamPart } from '../canonical/answer'
import type { Usage, UsageRecord, UsageSource } from '../canonical/usage'
import type { VideoOutcome, VideoRequest } from '../canonical/video'
import type { ModelEntry } from '../catalog/catalog-schema'
import type { ModelSources, ResolvedModel } from '../catalog/resolve-model'
import type { GatewayError } from '../errors/gateway-error'
import type { RequestRecord } from '../observability/request-record'
import type { ProviderAdapter, TranslateCapability, UpstreamTarget, VideoCapability } from '../providers/adapter'
import type { ProviderConfig } from '../providers/provider-config'
import type { FramedSseEvent, SseEvent } from '../streaming/sse'
import type { UpstreamObject } from '../streaming/upstream-json'

/**
 * The types a surface and the dispatcher share. Calls go one way: the dispatcher (dispatcher.ts)
 * calls a surface's `plan` and the functions its plan carries (send, the encoding, the pricing);
 * a surface calls nothing of dispatch, it only describes what it needs in these types.
 */

/** A list with at least one member: what route planning always returns. */
export type NonEmpty<T> = [T, ...T[]]

/** One way to serve a call: a catalogue model through one of its routes. */
export interface Route {
  model: ModelEntry
  provider: ProviderConfig
  adapter: ProviderAdapter
  /** The provider's own id for the model. */
  upstreamModel: string
}

/** One billed request as a surface's endpoint hands it over: who calls, the checked body, and the call's identity. */
export interface SurfaceRequest<Body> {
  caller: Caller
  body: Body
  requestId: string
  /** Aborts when the client goes away. */
  signal: AbortSignal
  headers: Headers
  /** The request's query string, or ''. */
  query: string
  /** What the call does, as it happens: attempts, the charge, the end of a stream. */
  record: RequestRecord
}

/**
 * A client surface: one API shape the gateway serves (chat completions, messages, responses,
 * each media endpoint, videos). `plan` reads the request and says what it needs: the model it
 * names and which routes it can use; the dispatcher finds those routes and asks the plan for the
 * call over them (how much to hold, how each route is reached, how its answer is written for the
 * client), then runs it the same way for every surface. Errors are thrown, and written in the
 * envelope of the surface's path by errors/render.ts; a stream that fails after its first byte
 * ends with the surface's own failure events (`failure` below).
 */
export interface Surface<Body, R extends Route = Route> {
  /** Of the services, a plan reads only where models are looked up (catalog/resolve-model.ts). */
  plan(services: ModelSources, request: SurfaceRequest<Body>): Promise<SurfacePlan<R>>
}

/** What a surface needs of dispatch: the model's routes it can use, and the call it makes over them. */
export interface SurfacePlan<R extends Route> {
  /** The model the request names: resolved, allowed to the caller, of the surface's type. */
  model: ResolvedModel
  /** The route as the surface reaches it, or undefined when its API cannot serve the surface. */
  usable(route: Route): R | undefined
  /** Everything else, decided over the usable routes (in config order, never empty) before the hold. */
  call(routes: NonEmpty<R>): CallPlan<R>
}

/** What every call decides before the hold. */
export interface PlannedCall<R extends Route> {
  /** The model the hold is recorded under. */
  modelId: string
  /** The routes to try, in order: the first that answers serves (those the dispatcher found, or fewer). */
  routes: NonEmpty<R>
  /** The worst case, in micro-credits, reserved before the first upstream call. */
  holdAmount: bigint
  /** For a conversation, the request field that bounds its output and so its worst case: named by a refusal's hint. */
  outputCap?: OutputCap
}

/** The field that bounds a conversation's output: how many tokens the hold assumed, and whether the client set it. */
export interface OutputCap {
  param: string
  tokens: number
  given: boolean
}

/** A call answered by one HTTP response: the dispatcher tries the routes with failover with `send`, then delivers. */
export interface SentCall<R extends Route> extends PlannedCall<R> {
  send(route: R, target: UpstreamTarget): Promise<Response>
}

/** A conversation (chat completions, messages, responses): the answer is settled from its token usage and written by the encoding. */
export interface ConversationCall<R extends Route> extends SentCall<R> {
  kind: 'conversation'
  /** How the answer of the route that answered is read and written for the client. */
  encoding(route: R): ConversationEncoding
}

/** A call billed by what came back (embeddings, images, speech, transcriptions): the surface prices the answer. */
export interface PricedCall<R extends Route> extends SentCall<R> {
  kind: 'priced'
  /** Reads the answer of the route that answered; throwing means the answer was unusable (not billed). */
  price(response: Response, route: R): Promise<PricedAnswer>
}

/** A route whose API makes videos. */
export type VideoRoute = Route & { video: VideoCapability }

/**
 * A call answered by a job the gateway waits for (a video): submitted, polled and fetched
 * (video-job.ts), with failover rules of its own (a job past its deadline is not retried
 * elsewhere). The surface prices the finished job; throwing releases the hold.
 */
export interface VideoCall extends PlannedCall<VideoRoute> {
  kind: 'video'
  job: VideoRequest
  price(outcome: VideoOutcome, route: VideoRoute): PricedAnswer
}

export type CallPlan<R extends Route> = ConversationCall<R> | PricedCall<R> | VideoCall

/** What an answer cost, what to record of it, and the client's reply once settled. */
export interface PricedAnswer {
  /** The charge; throws UntrustedUsageError when the upstream's counts behind it cannot be trusted. */
  cost: () => bigint
  usage: UsageRecord
  respond(cost: number): Response
}

/** An upstream that answered with a success status, with the route that produced it. */
export interface UpstreamAnswer<R> {
  route: R
  response: Response
  /** Aborts the upstream request (client gone, stream abandoned). */
  abort: () => void
  /** The client's own signal: aborted once the client left, which also aborted the upstream request. */
  clientSignal: AbortSignal
}

/** What a relay has counted so far: the provider's usage when it reported one, else the gateway's own. */
export interface StreamedSoFar {
  usage: Usage
  source: UsageSource
}

/**
 * What a relay does with one upstream item, or at the upstream's end. Text is stream text as the
 * client gets it (whole events, framed): a native event passed on unchanged is its own text.
 */
export type StreamStep =
  /** Write this text ('': nothing, read on). */
  | { kind: 'write'; text: string }
  /** The stream is complete: settle for this usage, then write the closing text, which carries the cost. */
  | { kind: 'settle'; soFar: StreamedSoFar; closing: (cost: number) => string }
  /** The upstream reported in-band that it failed: not billed; write this text and end. */
  | { kind: 'release'; text: string }
  /** The stream broke: closed as unfinished (stream-relay.ts), then the surface's failure text. */
  | { kind: 'fail'; cause: unknown }

/** A step that ends the stream. */
export type ClosingStep = Exclude<StreamStep, { kind: 'write' }>

/**
 * Reads one stream for a relay: a native stream in the surface's own format (its events
 * observed for usage and passed on) or canonical parts from a translated route (written as the
 * surface's events).
 */
export interface StreamObserver<Item> {
  step(item: Item): StreamStep
  /** The upstream ended. */
  end(): ClosingStep
  /** What was generated so far, billed when the client leaves or the upstream goes silent. */
  soFar(): StreamedSoFar
  /** How the surface's stream ends (as stream text) when it fails after its first byte. */
  failure(error: GatewayError): string
  /**
   * Optional: one whole event's bytes (`data: ` to its blank line, as a network chunk brought
   * it), relayed without being read as text when the observer recognises it (a native chat
   * stream's next content chunk). It writes what the client gets through `out` and answers true,
   * having counted it as `step` would; false leaves the event to `step`, read as usual.
   */
  relayEventBytes?(event: Uint8Array, out: EventWriter): boolean
}

/** Where an observer writes the bytes of an event it relays as bytes (the relay's response body). */
export interface EventWriter {
  write(part: Uint8Array | string): void
}

/** Writes canonical parts as one surface's stream events. */
export interface StreamEncoder {
  encode(part: StreamPart): SseEvent[]
  /** The closing events, once the call is settled; they carry the cost. */
  finish(part: Extract<StreamPart, { type: 'finish' }>, usage: Usage, cost: number): SseEvent[]
  failure(error: GatewayError): SseEvent[]
}

/**
 * How a conversation surface (chat completions, messages, responses) reads and writes the answer
 * of the route that answered: a native route's answers are the surface's own format, observed
 * and passed on with the cost added; a translated route's are read as canonical by the route's
 * translator and encoded.
 */
export type ConversationEncoding = NativeEncoding | TranslatedEncoding

/** What every conversation encoding states, whichever way its route was reached. */
export interface AnswerShape {
  streaming: boolean
  /** The gateway's estimate of the request's input tokens, billed when the provider reports nothing. */
  inputTokens: number
  /** The most output tokens the route that answered was asked for (all choices together): reported usage above it is anomalous. */
  outputTokenLimit: number
}

/** A native route's answers: the surface's own format. */
export interface NativeEncoding extends AnswerShape {
  mode: 'native'
  /** The whole answer's usage, when it reports one. */
  nativeUsage(body: UpstreamObject): Usage | undefined
  /** The gateway's own count when the answer reports no usage. */
  estimateNative(body: UpstreamObject): Usage
  /** The whole answer as the client gets it, with the cost. */
  presentNative(body: UpstreamObject, cost: number): unknown
  /** The observer of the surface's own stream. */
  observeNative(): StreamObserver<FramedSseEvent>
}

/** A translated route's answers: canonical, from the route's translator. */
export interface TranslatedEncoding extends AnswerShape {
  mode: 'translated'
  /** The route's translator, which reads the upstream's answer and stream as canonical ones. */
  translate: TranslateCapability
  /** The canonical answer in the surface's format. */
  encodeAnswer(answer: Answer, cost: number): unknown
  /** The encoder of canonical parts. */
  encodeStream(): StreamEncoder
}
