import type { Static, TObject } from '@sinclair/typebox'
import type { Services } from '../services/services'

/**
 * One admin operation, served both as an HTTP endpoint under /admin/v1 and as a
 * `tollgate admin <command…>` CLI command, from the same schemas and the same code.
 */
export interface AdminOperation {
  /** CLI words, e.g. ['keys', 'create']. */
  command: readonly string[]
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  /** Relative to /admin/v1, with `:name` parameters. */
  path: string
  summary: string
  params?: TObject
  query?: TObject
  body?: TObject
  /** Success status; 200 unless it creates something. */
  status?: 200 | 201
  run(services: Services, input: AdminInput): Promise<unknown>
}

/** Fields of an admin request (path parameters, query, body, CLI flags) before its operation's schema has checked them: free-form. */
export type AdminFields = Record<string, unknown>

export interface AdminInput {
  params: AdminFields
  query: AdminFields
  body: AdminFields
}

type Of<S extends TObject | undefined> = S extends TObject ? Static<S> : Record<string, never>

/** Keeps each operation's `run` typed by its own schemas; the result is the erased shape above. */
export function defineOperation<
  P extends TObject | undefined = undefined,
  Q extends TObject | undefined = undefined,
  B extends TObject | undefined = undefined,
>(
  operation: Omit<AdminOperation, 'run' | 'params' | 'query' | 'body'> & {
    params?: P
    query?: Q
    body?: B
    run(services: Services, input: { params: Of<P>; query: Of<Q>; body: Of<B> }): Promise<unknown>
  },
): AdminOperation {
  return operation as AdminOperation
}
