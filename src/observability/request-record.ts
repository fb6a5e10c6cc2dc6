import type { Usage } from '../canonical/usage'
import { newSpanId, type TraceContext, traceparentOf } from './trace-context'

/**
 * How a request ended, in one word: the log's `outcome` (docs/operations.md#logs).
 * `refused` is the gateway saying no (a 4xx of its own); `upstream_error` an upstream that
 * failed or could not be read; `error` a fault of the gateway's.
 */
export type RequestOutcome = 'ok' | 'client_closed' | 'upstream_error' | 'refused' | 'error'

/** How a call reached the gateway: the log's `transport`. */
export type RequestTransport = 'http' | 'websocket'

/** The status a request that the client left is logged with (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499

/** One upstream call of a request: one failover step. */
export interface UpstreamAttempt {
  provider: string
  /** Epoch milliseconds. */
  startedAt: number
  durationMs: number
  /** Until the response headers; absent when none came. */
  ttfbMs?: number
  /** The upstream's HTTP status, when it answered. */
  status?: number
  /** Why the attempt failed without a status (`timeout`, `unreachable`, `client_closed`), or moved on (`failover`). */
  reason?: string
  /** The attempt's span id when the request is traced, chosen before the call so the upstream request carries it. */
  spanId?: string
}

/** What one upstream call carries of the request's trace: the attempt's span id and the headers that name it. */
export interface UpstreamCallContext {
  spanId: string | undefined
  /** A `traceparent` when the request is traced; empty otherwise. */
  headers: Record<string, string>
}

/** A timed step of the gateway's own work on a request, for traces. */
export interface RequestStep {
  name: 'authenticate' | 'hold' | 'settle'
  /** Epoch milliseconds. */
  startedAt: number
  durationMs: number
}

/** What the call was charged, once it closed. */
export interface RequestCharge {
  /** The gateway's model id that served (the target, for an alias). */
  model: string
  provider: string
  /** Token counts, when the call was billed on tokens. */
  usage?: Usage
  /** Credits taken; 0 when released. */
  cost: number
  /** The same, exactly, in micro-credits. */
  costMicros: bigint
}

/** Who the request was made by, once authenticated: the record's copy, so a refusal after authentication still names it. */
export interface RequestParty {
  accountId: string | null
  keyId: string | null
  /** The gateway's id of a user signed in with a token (`usr_…`), and the identity provider's subject. */
  userId: string | null
  userSub: string | null
}

/** Who consumes finished records: the request log, metrics, traces, the request activity. */
export interface RequestRecordSink {
  /** A streamed answer's headers went out; its record finishes when its last byte does. */
  streamOpened(record: RequestRecord): void
  finished(record: RequestRecord): void
}

/**
 * Everything the gateway learns about one request while serving it, collected as it happens
 * (the endpoint, the attempts, the charge) and handed to the sinks once, when the request
 * ends: when its answer is returned or, for a stream, when its last byte goes out or the client
 * leaves. Never holds a credential, a body or a raw path.
 */
export class RequestRecord {
  readonly startedAt = Date.now()
  private readonly startedAtMonotonic = performance.now()
  /** The endpoint's path template; undefined for a path no endpoint serves. */
  pathTemplate: string | undefined
  /** How the call arrived: an HTTP request, or a `response.create` message on a Responses WebSocket (docs/api.md#responses-over-websocket). */
  transport: RequestTransport = 'http'
  readonly attempts: UpstreamAttempt[] = []
  readonly steps: RequestStep[] = []
  /** The model id the call was planned under (the id asked for, or the catalogue model a surface resolved it to), until a charge names the one that served. */
  requestedModel: string | undefined
  /** The model id exactly as the client named it in the body (an alias, a bare or unknown name); kept when a charge names the one that served. */
  modelRequested: string | undefined
  /** Who called, from the moment authentication knew (before its rate limits and scopes are checked). */
  party: RequestParty | undefined
  /** The client's session (the call's session header), when it named one. */
  sessionId: string | null = null
  /** The code of the error answered (`insufficient_balance`, `rate_limit_exceeded`); undefined for a success. */
  errorCode: string | undefined
  charge: RequestCharge | undefined
  /** The request's span when traces are exported (docs/operations.md#traces); undefined otherwise. */
  trace: TraceContext | undefined
  status: number | undefined
  outcome: RequestOutcome | undefined
  durationMs: number | undefined
  private streaming = false
  private done = false

  constructor(
    readonly requestId: string,
    readonly method: string,
    private readonly sink: RequestRecordSink,
  ) {}

  /** The model to report: the one that served, else the one asked for. */
  get model(): string | undefined {
    return this.charge?.model ?? this.requestedModel
  }

  get isStreaming(): boolean {
    return this.streaming
  }

  /**
   * Epoch milliseconds, anchored to the request's wall-clock start and advanced by the monotonic
   * clock: precise below a millisecond, so spans that start within one still sort in order.
   */
  now(): number {
    return this.startedAt + (performance.now() - this.startedAtMonotonic)
  }

  /** The context of the next upstream call: a new attempt span, named to the upstream in `traceparent`. */
  upstreamCall(): UpstreamCallContext {
    if (!this.trace) return { spanId: undefined, headers: {} }
    const spanId = newSpanId()
    return { spanId, headers: { traceparent: traceparentOf(this.trace, spanId) } }
  }

  attempt(attempt: UpstreamAttempt): void {
    this.attempts.push(attempt)
  }

  /** Times one step of the gateway's own work; the step is recorded whether it succeeds or throws. */
  async time<T>(name: RequestStep['name'], work: () => Promise<T>): Promise<T> {
    const startedAt = this.now()
    const started = performance.now()
    try {
      return await work()
    } finally {
      this.steps.push({ name, startedAt, durationMs: performance.now() - started })
    }
  }

  /** The error the request is answered with; the first one named stays (a later render of the same failure changes nothing). */
  answeredError(code: string): void {
    this.errorCode ??= code
  }

  charged(charge: RequestCharge): void {
    this.charge = charge
  }

  /** The answer is a stream: the request ends with its last byte (`finish` from the relay), not when its headers go out. */
  streamOpened(): void {
    if (this.streaming || this.done) return
    this.streaming = true
    this.sink.streamOpened(this)
  }

  /** Ends the request once; later calls change nothing. */
  finish(status: number, outcome: RequestOutcome): void {
    if (this.done) return
    this.done = true
    this.status = status
    this.outcome = outcome
    this.errorCode = errorCodeOf(outcome, this.errorCode)
    this.durationMs = performance.now() - this.startedAtMonotonic
    this.sink.finished(this)
  }
}

/**
 * The error code a finished request is reported with: none for a success; `client_closed` for a
 * client that left (whatever its leaving made fail); the error answered otherwise, or, where no
 * error body was written (a stream that failed after its first byte without naming one), the
 * outcome itself.
 */
function errorCodeOf(outcome: RequestOutcome, answered: string | undefined): string | undefined {
  if (outcome === 'client_closed') return 'client_closed'
  if (outcome === 'ok') return undefined
  return answered ?? outcome
}

/** The outcome of an answer that ended with this status (a stream reports its own). */
export function outcomeOfStatus(status: number): RequestOutcome {
  if (status === CLIENT_CLOSED_STATUS) return 'client_closed'
  if (status < 400) return 'ok'
  if (status < 500) return 'refused'
  return status === 502 || status === 504 ? 'upstream_error' : 'error'
}

/** A client may send any token as its method; logs and records name only the ones HTTP defines, and `OTHER`. */
export function reportedMethod(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'OTHER'
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'])
