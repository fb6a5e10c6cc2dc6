import type { PGlite } from '@electric-sql/pglite'
import type { Query } from 'drizzle-orm'

/**
 * The embedded database's prepared statements. PGlite runs each query through an unnamed
 * statement, so the hot billing statements (a FixedStatement's rendered text, the same on every
 * run) were parsed and planned again each time, on the event loop every request shares: about
 * a millisecond a run for the lease charges, a third of the time PGlite blocked the loop. Here
 * each such text is prepared once (`PREPARE`) and run with `EXECUTE`, whose own text is trivial
 * to parse, and whose plan the server may keep.
 *
 * EXECUTE is a utility statement and takes no bind parameters, so its arguments are written as
 * literals: strings quoted (standard conforming: a quote is doubled, a backslash is itself),
 * numbers, booleans and null as they are. A value of any other kind, or a string holding a NUL
 * (which no text value may), runs the statement as before, unprepared; so does a text that
 * cannot be prepared (a parameter whose type the server cannot infer), and every text past the
 * first MAX_PREPARED: the statements are a fixed few, and a text that varied would otherwise
 * grow the session without end.
 */
export class PglitePrepared {
  private readonly names = new Map<string, Promise<string | undefined>>()
  private conforming: Promise<boolean> | undefined

  constructor(private readonly client: PGlite) {}

  async rows<Row>(query: Query): Promise<Row[]> {
    const literals = query.params.map(literalOf)
    const name = literals.includes(undefined) ? undefined : await this.nameOf(query.sql)
    if (!name) return (await this.client.query<Row>(query.sql, query.params)).rows
    return (await this.client.query<Row>(`execute ${name}${literals.length === 0 ? '' : `(${literals.join(', ')})`}`)).rows
  }

  private nameOf(sql: string): Promise<string | undefined> {
    let name = this.names.get(sql)
    if (!name) {
      if (this.names.size >= MAX_PREPARED) return Promise.resolve(undefined)
      const chosen = `tollgate_statement_${this.names.size + 1}`
      // One statement only: the extended protocol refuses a text of several.
      name = this.conformingStrings().then((conforming) =>
        conforming
          ? this.client.query(`prepare ${chosen} as ${sql}`).then(
              () => chosen,
              () => undefined,
            )
          : undefined,
      )
      this.names.set(sql, name)
    }
    return name
  }

  /** The literals are written for standard conforming strings (PostgreSQL's default), made sure of once. */
  private conformingStrings(): Promise<boolean> {
    this.conforming ??= this.client.exec('set standard_conforming_strings = on').then(
      () => true,
      () => false,
    )
    return this.conforming
  }
}

/** How many texts are prepared at most; the billing statements are about a dozen. */
const MAX_PREPARED = 64

/** A parameter as an SQL literal, or undefined when it is of a kind not written here. */
export function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return value.includes('\0') ? undefined : `'${value.replaceAll("'", "''")}'`
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return undefined
}
