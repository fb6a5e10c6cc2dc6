import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/**
 * What the primary and its workers say to each other over Bun's IPC channel
 * (docs/operations.md#workers). Each side checks what arrives: a message that does not match is
 * dropped, like every other input from outside the process.
 */

/** The environment variable that makes a `serve` process a worker; its value is the worker's slot. */
export const WORKER_ENV = 'TOLLGATE_WORKER'

const CounterOperation = Type.Object({
  kind: Type.Literal('counter'),
  id: Type.Integer(),
  op: Type.Union([Type.Literal('add'), Type.Literal('read')]),
  name: Type.String({ maxLength: 200 }),
  amount: Type.Number({ minimum: 0 }),
  ttlMs: Type.Integer({ minimum: 1, maximum: 600_000 }),
})

const ConfigText = Type.Union([Type.String(), Type.Null()])

export const FromWorker = Type.Union([
  Type.Object({ kind: Type.Literal('listening'), url: Type.String({ maxLength: 300 }) }),
  CounterOperation,
  /** Asks the primary for every other worker's metrics. */
  Type.Object({ kind: Type.Literal('metrics-gather'), id: Type.Integer() }),
  /** This worker's metrics, answering the primary's `metrics-snapshot`. */
  Type.Object({ kind: Type.Literal('metrics-reply'), id: Type.Integer(), text: Type.String() }),
  /** Asks, as the worker starts, for the config file's text the primary last loaded. */
  Type.Object({ kind: Type.Literal('config-request'), id: Type.Integer() }),
  /** A SIGHUP sent to the worker itself: the primary reloads the whole instance. */
  Type.Object({ kind: Type.Literal('reload-request') }),
])
export type FromWorker = Static<typeof FromWorker>
export type CounterOperation = Static<typeof CounterOperation>

export const FromPrimary = Type.Union([
  Type.Object({ kind: Type.Literal('counter-reply'), id: Type.Integer(), value: Type.Number() }),
  Type.Object({ kind: Type.Literal('metrics-snapshot'), id: Type.Integer() }),
  Type.Object({ kind: Type.Literal('metrics-gathered'), id: Type.Integer(), texts: Type.Array(Type.String()), workers: Type.Integer() }),
  /** The config file's text the primary last loaded (null: no file, the built-in catalogue serves). */
  Type.Object({ kind: Type.Literal('config'), id: Type.Integer(), text: ConfigText }),
  /** The instance reloads: this text loaded in the primary and replaces the worker's catalogue. */
  Type.Object({ kind: Type.Literal('reload'), text: ConfigText }),
])
export type FromPrimary = Static<typeof FromPrimary>

export function fromWorker(message: unknown): FromWorker | undefined {
  return Value.Check(FromWorker, message) ? message : undefined
}

export function fromPrimary(message: unknown): FromPrimary | undefined {
  return Value.Check(FromPrimary, message) ? message : undefined
}
