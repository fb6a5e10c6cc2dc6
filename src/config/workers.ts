import { ConfigError } from './config-error'

/** More processes than this is a typo, not a machine: each worker holds its own database pool. */
export const MAX_WORKERS = 256

/**
 * The number of `serve` processes (docs/operations.md#workers). One unless set: measured on two
 * cores, one process with credit leases serves more billed calls per second at a lower tail than
 * two (`bun run bench`), and the embedded database allows only one. `setting` names where the
 * value came from (`TOLLGATE_WORKERS` or `--workers`) so the error points at it.
 */
export function workerCount(value: string | undefined, setting: string, databaseUrl: string | undefined): number {
  if (value === undefined) return 1
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_WORKERS) {
    throw new ConfigError(`${setting} must be a whole number from 1 to ${MAX_WORKERS} (got ${JSON.stringify(value.slice(0, 40))})`)
  }
  const count = Number(value)
  if (count > 1 && !databaseUrl) {
    throw new ConfigError(
      `${setting}=${count}: the embedded database is single-process; several workers need Postgres (set DATABASE_URL) or set ${setting} to 1`,
    )
  }
  return count
}
