import { fillPlaceholders, type Query, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'

const dialect = new PgDialect()

/**
 * A statement whose text never changes, only its values: its SQL (written with
 * `sql.placeholder(name)` where the values go) is rendered once, at first use, and each run only
 * puts its values in place. Drizzle renders a statement's text anew on every run, which for the
 * billing statements every call runs (a few KB of SQL each) allocated more than the rest of the
 * call together; the text being the same also lets the driver reuse its prepared statement.
 */
export class FixedStatement {
  private rendered: Query | undefined

  constructor(private readonly build: () => SQL) {}

  /** The text and this run's values (by placeholder name, each of its column's type: free-form, as Drizzle takes them), for DatabaseHandle.rows. */
  with(values: Record<string, unknown>): Query {
    this.rendered ??= dialect.sqlToQuery(this.build())
    return { sql: this.rendered.sql, params: fillPlaceholders(this.rendered.params, values) }
  }
}
