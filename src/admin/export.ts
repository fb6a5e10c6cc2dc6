/**
 * A whole selection written as CSV or JSON Lines while it is read, a page at a time, so an
 * export has no row cap and holds one page in memory (docs/operations.md#reporting).
 */

export type ExportFormat = 'csv' | 'jsonl'

/** The media type each export is sent as (its `content-type`, with `charset=utf-8`), as the API document names it. */
export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = { csv: 'text/csv', jsonl: 'application/x-ndjson' }

export class AdminExport {
  constructor(
    readonly format: ExportFormat,
    /** The file name a download suggests, without its extension. */
    readonly name: string,
    /** The CSV header: the JSON field names, in the order rows are written. */
    readonly fields: readonly string[],
    readonly pages: AsyncIterable<readonly object[]>,
  ) {}

  get contentType(): string {
    return `${EXPORT_MEDIA_TYPES[this.format]}; charset=utf-8`
  }

  get fileName(): string {
    return `${this.name}.${this.format}`
  }

  /** The export's text, one piece per page; the CSV header comes with the first. */
  async *chunks(): AsyncGenerator<string> {
    let header = this.format === 'csv' ? csvLine(this.fields) : ''
    for await (const page of this.pages) {
      yield header + page.map((row) => (this.format === 'csv' ? csvLine(this.fields.map((field) => cellOf(row, field))) : `${JSON.stringify(row)}\n`)).join('')
      header = ''
    }
    if (header !== '') yield header
  }
}

/** A page of CSV lines ends each with CRLF (RFC 4180). */
function csvLine(cells: readonly string[]): string {
  return `${cells.map(quoteCell).join(',')}\r\n`
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function quoteCell(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell
}

/**
 * A field as text: empty for null, text made inert (below), anything else as JSON writes it
 * (amounts with their six decimals, nested objects such as `usage` as their JSON text). Only
 * text is touched: a negative amount the exporter writes itself stays a number.
 */
function cellOf(row: object, field: string): string {
  const value: unknown = Object.getOwnPropertyDescriptor(row, field)?.value
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return inertText(value)
  return JSON.stringify(value) ?? ''
}

/** What a spreadsheet reads as the start of a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * Text that others chose (a user's `sub`, a credit's note) opened in a spreadsheet must not run:
 * a cell that starts like a formula gets a single quote in front, which spreadsheets show as
 * text (docs/operations.md#reporting).
 */
function inertText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text
}

/** Reads `read` a page at a time from the start position until a short page ends the selection. */
export async function* keysetPages<Row, Position>(
  read: (after: Position | undefined) => Promise<Row[]>,
  pageSize: number,
  positionOf: (row: Row) => Position,
  start: Position | undefined,
): AsyncGenerator<Row[]> {
  let after = start
  for (;;) {
    const rows = await read(after)
    if (rows.length > 0) yield rows
    const last = rows.at(-1)
    if (rows.length < pageSize || last === undefined) return
    after = positionOf(last)
  }
}
