import type { Caller } from '../auth/authenticate'
import type { Answer, StreamPart } from '../canonical/answer'
import type { Usage, UsageSource } from '../canonical/usage'
import type { ModelEntry } from '../catalog/catalog-schema'
import type { GatewayError } from '../errors/gateway-error'
import { contextOf } from '../http/request-context'
import { RequestRecord } from '../observability/request-record'
import type { JsonObject, ProviderAdapter, TranslateCapability, UpstreamTarget } from '../providers/adapter'
import type { ProviderConfig } from '../providers/provider-config'
import type { Services } from '../services/services'
import type { FramedSseEvent, SseEvent } from '../streaming/sse'
import type { BilledCall } from './billed-call'

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

/** A route whose API speaks the surface's format: the body passes through. */
export type NativeRoute<Capability> = Route & { mode: 'native'; native: Capability }

/** A route reached by translation: the canonical prompt out, canonical answers and parts back. */
export type TranslatedRoute = Route & { mode: 'translated'; translate: TranslateCapability }

export type ConversationRoute<Capability> = NativeRoute<Capability> | TranslatedRoute

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
 * each media endpoint, videos). `plan` decides everything before money moves: which model,
 * which routes in which order, how much to hold, how each route is reached and how its answer
 * is delivered. The dispatcher (dispatcher.ts) runs every surface the same way. Errors are
 * thrown, and written in the envelope of the surface's path by errors/render.ts; a stream that
 * fails after its first byte ends with the surface's own failure events (`failure` below).
 */
export interface Surface<Body, R extends Route = Route> {
  plan(services: Services, request: SurfaceRequest<Body>): Promise<CallPlan<R> | JobPlan<R>>
}

/** What every plan decides before the hold. */
export interface PlannedCall<R extends Route> {
  /** The catalogue model the hold is recorded under. */
  modelId: string
  /** The routes to try, in order: the first that answers serves. */
  routes: NonEmpty<R>
  /** The worst case, in micro-credits, reserved before the first upstream call. */
  holdAmount: bigint
}

/** A call answered by one HTTP response: the dispatcher tries the routes with failover, then the surface delivers. */
export interface CallPlan<R extends Route> extends PlannedCall<R> {
  send(route: R, target: UpstreamTarget): Promise<Response>
  /** Reads the answer, settles the call and answers the client; throwing releases the hold. */
  deliver(call: BilledCall, answer: UpstreamAnswer<R>): Promise<Response>
}

/**
 * A call answered by a job the gateway waits for (a video): submitted, polled and fetched,
 * with failover rules of its own (a job past its deadline is not retried elsewhere). The
 * dispatcher holds; the job settles what it delivers; throwing releases the hold.
 */
export interface JobPlan<R extends Route> extends PlannedCall<R> {
  run(call: BilledCall, clientSignal: AbortSignal): Promise<Response>
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
 * How a conversation surface (chat completions, messages, responses) writes answers, whichever
 * way its route was reached: native answers are the surface's own format, observed and passed
 * on with the cost added; translated ones are canonical and encoded.
 */
export interface ConversationEncoding {
  streaming: boolean
  /** The gateway's estimate of the request's input tokens, billed when the provider reports nothing. */
  inputTokens: number
  /** The most output tokens the route that answered was asked for (all choices together): reported usage above it is anomalous. */
  outputTokenLimit: number
  /** Native routes: the whole answer's usage, when it reports one. */
  nativeUsage(body: JsonObject): Usage | undefined
  /** Native routes: the gateway's own count when the answer reports no usage. */
  estimateNative(body: JsonObject): Usage
  /** Native routes: the whole answer as the client gets it, with the cost. */
  presentNative(body: JsonObject, cost: number): unknown
  /** Native routes: the observer of the surface's own stream. */
  observeNative(): StreamObserver<FramedSseEvent>
  /** Translated routes: the canonical answer in the surface's format. */
  encodeAnswer(answer: Answer, cost: number): unknown
  /** Translated routes: the encoder of canonical parts. */
  encodeStream(): StreamEncoder
}

/** The plain values a surface's endpoint hands to the dispatcher. */
export function surfaceRequest<Body>(body: Body, caller: Caller, requestId: string, request: Request): SurfaceRequest<Body> {
  const url = new URL(request.url)
  // Every request the app serves has its record; one served outside it (a test calling the
  // endpoint alone) gets one that reports to nobody.
  const record = contextOf(request)?.record ?? new RequestRecord(requestId, request.method, UNOBSERVED)
  return { caller, body, requestId, signal: request.signal, headers: request.headers, query: url.search, record }
}

const UNOBSERVED = { streamOpened: () => undefined, finished: () => undefined }
