import { Type } from '@sinclair/typebox'
import type { TimeAndId } from '../db/keyset'
import { InvalidRequestError } from '../errors/kinds'

/**
 * Keyset pagination for admin lists (docs/operations.md#reporting): a page ends with the position
 * of its last row, and the next page reads strictly after it in the list's order. Rows inserted
 * meanwhile sort before that position (lists are newest first), so they never shift later pages:
 * every row is read once. The cursor is opaque to clients: base64url of `<list>:<position>`.
 */

export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 1000

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: `Rows per page; ${DEFAULT_PAGE_SIZE} unless given.` })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: "The previous page's `next_cursor`." })),
}

const MICROSECOND_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

export function encodeCursor(list: string, position: string): string {
  return Buffer.from(`${list}:${position}`, 'utf8').toString('base64url')
}

/** The position inside a cursor of this list; any other text is a 400 naming `cursor`. */
function decodeCursor(list: string, cursor: string): string {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : ''
  if (!text.startsWith(`${list}:`)) throw malformed()
  return text.slice(list.length + 1)
}

export function timeAndIdCursor(list: string, position: TimeAndId): string {
  return encodeCursor(list, `${position.createdAt}|${position.id}`)
}

export function decodeTimeAndId(list: string, cursor: string | undefined): TimeAndId | undefined {
  if (cursor === undefined) return undefined
  const position = decodeCursor(list, cursor)
  const bar = position.indexOf('|')
  const createdAt = position.slice(0, bar)
  const id = position.slice(bar + 1)
  if (bar < 0 || !MICROSECOND_TIME.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || id === '') throw malformed()
  return { createdAt, id }
}

export function decodeSequence(list: string, cursor: string | undefined): bigint | undefined {
  if (cursor === undefined) return undefined
  const position = decodeCursor(list, cursor)
  if (!/^[1-9]\d{0,18}$/.test(position)) throw malformed()
  return BigInt(position)
}

function malformed(): InvalidRequestError {
  return new InvalidRequestError("cursor is not a cursor of this list: pass the previous page's next_cursor as it is.", { param: 'cursor' })
}

/** A page of `limit` rows read as `limit + 1`: the extra row only tells that another page exists. */
export function pageOf<Row, View>(rows: Row[], limit: number, view: (row: Row) => View, cursorOf: (row: Row) => string) {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { object: 'list' as const, data: page.map(view), next_cursor: rows.length > limit && last !== undefined ? cursorOf(last) : null }
}
