import { InvalidRequestError } from '../errors/kinds'
import { DEFAULT_PAGE_SIZE, pageOf } from './cursor'
import { AdminExport, type ExportFormat, keysetPages } from './export'

/** Rows read per query while an export streams: one page in memory at a time. */
const EXPORT_PAGE_SIZE = 1000

/** How a report's rows are read in keyset order and written (docs/operations.md#reporting). */
export interface Listing<Row, Position> {
  /** The export's file name, without its extension. */
  name: string
  /** The CSV header: the JSON field names, in the order they are written. */
  fields: readonly string[]
  /** Up to `limit` rows after `after` (from the start when undefined). */
  read(limit: number, after: Position | undefined): Promise<Row[]>
  positionOf(row: Row): Position
  view(row: Row): object
  cursorOf(position: Position): string
}

/**
 * One page of a report as JSON, or, with `format` csv or jsonl, the whole selection streamed
 * from `start` (`limit` is refused there: an export has no row cap).
 */
export async function pageOrExport<Row, Position>(
  listing: Listing<Row, Position>,
  query: { format?: 'json' | ExportFormat; limit?: number },
  start: Position | undefined,
) {
  const format = query.format ?? 'json'
  if (format !== 'json') {
    if (query.limit !== undefined) {
      throw new InvalidRequestError('limit applies to pages: an export streams the whole selection (narrow it with since, until or the filters).', {
        param: 'limit',
      })
    }
    const pages = keysetPages((after) => listing.read(EXPORT_PAGE_SIZE, after), EXPORT_PAGE_SIZE, listing.positionOf, start)
    return new AdminExport(format, listing.name, listing.fields, viewsOf(pages, listing.view))
  }
  const limit = query.limit ?? DEFAULT_PAGE_SIZE
  const rows = await listing.read(limit + 1, start)
  return pageOf(rows, limit, listing.view, (row) => listing.cursorOf(listing.positionOf(row)))
}

async function* viewsOf<Row>(pages: AsyncIterable<Row[]>, view: (row: Row) => object): AsyncGenerator<object[]> {
  for await (const page of pages) yield page.map(view)
}
