import { Type } from '@sinclair/typebox'
import {
  type PeriodUnit,
  positionOf,
  summarizeUsage,
  summaryView,
  USAGE_DIMENSIONS,
  type UsageDimension,
  type UsagePosition,
  type UsageQuery,
} from '../billing/usage-summary'
import { InvalidRequestError } from '../errors/kinds'
import type { Services } from '../services/services'
import { AdminExport } from './export'
import { defineOperation } from './operation'

const PERIOD_UNITS: readonly PeriodUnit[] = ['hour', 'day', 'month']
/** The field each summary row may carry, in order: what the CSV header names. */
const SUMMARY_COLUMNS = [
  'period',
  'account_id',
  'key_id',
  'user_sub',
  'model',
  'session_id',
  'requests',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cache_write_1h_tokens',
  'cost',
  'uncollected',
] as const
const DIMENSION_FIELD: Record<UsageDimension, (typeof SUMMARY_COLUMNS)[number]> = {
  account: 'account_id',
  key: 'key_id',
  user: 'user_sub',
  model: 'model',
  session: 'session_id',
}
/** An export reads the summary this many rows at a time. */
const EXPORT_PAGE = 5000

const Bound = Type.String({
  minLength: 7,
  maxLength: 40,
  description: 'A whole UTC hour: `YYYY-MM`, `YYYY-MM-DD`, or an ISO-8601 time with its offset on the hour (`2026-11-01T13:00:00Z`).',
})

/**
 * `GET /admin/v1/usage` (docs/operations.md#usage-summaries): the rollup summed by period and by the
 * parties asked for; a page of JSON, or the whole selection streamed as CSV or JSON Lines.
 */
export const USAGE_OPERATION = defineOperation({
  command: ['usage'],
  method: 'GET',
  path: '/usage',
  summary: 'Usage summaries by hour, day or month, and by account, key, user, model or session',
  query: Type.Object(
    {
      group_by: Type.Optional(
        Type.String({
          maxLength: 100,
          description: '`hour`, `day` or `month` (default `day`), optionally with `account`, `key`, `user`, `model`, `session`, comma-separated.',
        }),
      ),
      account_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Only this account's calls" })),
      key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Only this API key's calls" })),
      model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only the calls this gateway model served' })),
      session_id: Type.Optional(
        Type.String({ minLength: 1, maxLength: 128, description: "Only the calls of this client session (the calls' session header)" }),
      ),
      since: Type.Optional(Bound),
      until: Type.Optional(Bound),
      format: Type.Optional(
        Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('jsonl')], {
          description: 'json (a page, the default), or csv or jsonl: every row selected, streamed',
        }),
      ),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Rows per page; 100 unless given' })),
      cursor: Type.Optional(Type.String({ maxLength: 2000, description: "The previous page's `next_cursor`" })),
    },
    // Let through, so that `run` can refuse an unknown parameter by its name rather than have it silently dropped.
    { additionalProperties: true },
  ),
  run: async (services: Services, { query }) => {
    refuseUnknownParameters(query)
    const summary: UsageQuery = {
      ...parseGroupBy(query.group_by ?? 'day'),
      accountId: query.account_id,
      keyId: query.key_id,
      model: query.model,
      sessionId: query.session_id,
      since: query.since === undefined ? undefined : parseHourBound(query.since, 'since'),
      until: query.until === undefined ? undefined : parseHourBound(query.until, 'until'),
    }
    const fields = ['period', ...USAGE_DIMENSIONS.filter((dimension) => summary.dimensions.includes(dimension)).map((dimension) => DIMENSION_FIELD[dimension])]
    const columns = SUMMARY_COLUMNS.filter((column) => fields.includes(column) || !(Object.values(DIMENSION_FIELD) as string[]).includes(column))
    const format = query.format ?? 'json'
    if (format !== 'json') {
      if (query.limit !== undefined || query.cursor !== undefined) {
        throw new InvalidRequestError(`${query.limit !== undefined ? 'limit' : 'cursor'} pages JSON answers; format=${format} streams the whole selection.`, {
          param: query.limit !== undefined ? 'limit' : 'cursor',
        })
      }
      return new AdminExport(format, `usage-${summary.unit}`, columns, exportPages(services, summary))
    }
    const limit = query.limit ?? 100
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, fields.length)
    const rows = await summarizeUsage(services.reportsDb, summary, { limit: limit + 1, after })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return {
      object: 'list',
      data: page.map((row) => summaryView(row, summary)),
      next_cursor: rows.length > limit && last ? encodeCursor(positionOf(summary, last)) : null,
    }
  },
})

const KNOWN_PARAMETERS = new Set(['group_by', 'account_id', 'key_id', 'model', 'session_id', 'since', 'until', 'format', 'limit', 'cursor'])

function refuseUnknownParameters(query: object): void {
  const unknown = Object.keys(query).find((name) => !KNOWN_PARAMETERS.has(name))
  if (unknown !== undefined) {
    throw new InvalidRequestError(`Unknown query parameter '${unknown}'; this endpoint takes ${[...KNOWN_PARAMETERS].join(', ')}.`, { param: unknown })
  }
}

async function* exportPages(services: Pick<Services, 'reportsDb'>, summary: UsageQuery): AsyncGenerator<ReturnType<typeof summaryView>[]> {
  let after: UsagePosition | undefined
  for (;;) {
    const rows = await summarizeUsage(services.reportsDb, summary, { limit: EXPORT_PAGE, after })
    if (rows.length > 0) yield rows.map((row) => summaryView(row, summary))
    const last = rows.at(-1)
    if (rows.length < EXPORT_PAGE || !last) return
    after = positionOf(summary, last)
  }
}

function parseGroupBy(text: string): Pick<UsageQuery, 'unit' | 'dimensions'> {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
  const units = parts.filter((part): part is PeriodUnit => (PERIOD_UNITS as readonly string[]).includes(part))
  const dimensions = parts.filter((part): part is UsageDimension => (USAGE_DIMENSIONS as readonly string[]).includes(part))
  const unknown = parts.find((part) => !units.includes(part as PeriodUnit) && !dimensions.includes(part as UsageDimension))
  if (unknown !== undefined) {
    throw new InvalidRequestError(`group_by takes hour, day or month and any of account, key, user, model, session; '${unknown}' is none of them.`, {
      param: 'group_by',
    })
  }
  if (units.length !== 1) throw new InvalidRequestError('group_by names exactly one period: hour, day or month.', { param: 'group_by' })
  if (new Set(dimensions).size !== dimensions.length) throw new InvalidRequestError('group_by names a dimension twice.', { param: 'group_by' })
  return { unit: units[0] ?? 'day', dimensions }
}

const MONTH = /^\d{4}-\d{2}$/
const DAY = /^\d{4}-\d{2}-\d{2}$/
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}(:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:\d{2})$/

/**
 * A summary bound: the rollup keeps whole hours, so a bound must fall on one (a time between
 * would count part of an hour it cannot split). `YYYY-MM` and `YYYY-MM-DD` are the start of
 * that month or day, UTC; a time must carry its offset. Anything else is a 400 naming the bound.
 */
export function parseHourBound(text: string, param: string): Date {
  const iso = MONTH.test(text)
    ? `${text}-01T00:00:00Z`
    : DAY.test(text)
      ? `${text}T00:00:00Z`
      : TIME.test(text)
        ? text.replace(/T(\d{2})(?=Z|[+-])/, 'T$1:00')
        : undefined
  const time = iso === undefined ? Number.NaN : Date.parse(iso)
  if (Number.isNaN(time)) {
    throw new InvalidRequestError(`${param} is not a date (YYYY-MM, YYYY-MM-DD) or an ISO-8601 time with its offset.`, { param })
  }
  if (time % 3_600_000 !== 0) {
    throw new InvalidRequestError(`${param} must fall on a whole hour (UTC): summaries are kept per hour.`, { param })
  }
  return new Date(time)
}

function encodeCursor(position: UsagePosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url')
}

/** A position of as many values as the summary groups by: a cursor of another grouping is refused. */
function decodeCursor(cursor: string, length: number): UsagePosition {
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(position) && position.length === length && position.every((value) => typeof value === 'string')) return position
  } catch {
    // Reported below like every other cursor this endpoint did not write.
  }
  throw new InvalidRequestError('cursor is not one this endpoint wrote: pass next_cursor from the previous page.', { param: 'cursor' })
}
