import type { TObject, TSchema } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import { coerceText } from '../admin/coerce'
import { AdminExport, EXPORT_MEDIA_TYPES } from '../admin/export'
import type { AdminFields, AdminOperation } from '../admin/operation'
import { ADMIN_OPERATIONS } from '../admin/operations'
import { InvalidRequestError, NotFoundError } from '../errors/kinds'
import type { GatewayContext } from '../http/gateway-context'
import { ADMIN_ANSWERS } from '../http/openapi/admin-answers'
import { answerResponse, type ErrorStatus, errorResponses } from '../http/openapi/responses'
import { refuseInvalidBody } from '../http/schema-check'
import type { Services } from '../services/services'
import { findUnstorableText } from '../util/storable-text'

export const ADMIN_PREFIX = '/admin/v1'

/** Unknown ids are 404; credits reuse idempotency keys (409); bodies have their limits (408, 413). */
const READ_ERRORS: readonly ErrorStatus[] = [400, 401, 404, 500, 503]
const WRITE_ERRORS: readonly ErrorStatus[] = [400, 401, 404, 408, 409, 413, 500, 503]

/** Every admin operation as an endpoint; the admin token is checked by the gateway context. */
export function adminEndpoints(context: GatewayContext, services: Services) {
  const app = new Elysia({ name: 'endpoints/admin' }).use(context)
  for (const operation of ADMIN_OPERATIONS) {
    const answer = ADMIN_ANSWERS[`${operation.method} ${operation.path}`]
    app.route(
      operation.method,
      `${ADMIN_PREFIX}${operation.path}`,
      async ({ params, query, body, set }) => {
        refuseUnstorableText(params, query, body)
        const result = await operation.run(services, { params, query, body: bodyFields(body) })
        if (result instanceof AdminExport) return await exportResponse(result)
        set.status = operation.status ?? 200
        return result
      },
      {
        // Query strings are text; numbers in them are converted before validation. A parameter
        // the operation does not know is refused, not ignored: a misspelt filter would otherwise
        // widen the answer silently.
        transform: ({ query, body }) => {
          refuseUnknownQuery(operation.query, query)
          refuseUnknownBody(operation.body, body)
          // The gateway's own check first: the framework's costs seconds on a large wrongly typed body.
          if (operation.body) refuseInvalidBody(operation.body, bodyFields(body))
          if (operation.query) Object.assign(query, coerceText(operation.query, query))
        },
        // The gateway's strict parser reads the body first; naming JSON here documents it.
        parse: 'json',
        params: operation.params,
        query: operation.query,
        body: operation.body,
        // Answers are documented, not validated: the CLI prints the same results unchecked.
        detail: {
          tags: ['Admin'],
          summary: operation.summary,
          security: [{ adminToken: [] }],
          responses: {
            ...(answer ? answerResponse(answer.description, { 'application/json': answer.schema, ...exportAnswers(operation) }, operation.status ?? 200) : {}),
            ...errorResponses('openai', operation.method === 'GET' ? READ_ERRORS : WRITE_ERRORS),
          },
        },
      },
    )
  }
  return app
}

/**
 * What an operation with a `format` query parameter sends for `format=csv` and `format=jsonl`
 * (admin/export.ts), beside its JSON page: every operation that exports is documented so.
 */
const EXPORT_ANSWERS: Readonly<Record<string, TSchema>> = {
  [EXPORT_MEDIA_TYPES.csv]: t.String({ description: 'format=csv: a header row of the JSON field names, then one row per entry (RFC 4180), streamed' }),
  [EXPORT_MEDIA_TYPES.jsonl]: t.String({ description: 'format=jsonl: one JSON object per line (JSON Lines), streamed' }),
}

/** An operation that takes `format` also answers CSV and JSON Lines (admin/export.ts). */
function exportAnswers(operation: AdminOperation): Record<string, TSchema> {
  return operation.query && Object.hasOwn(operation.query.properties, 'format') ? EXPORT_ANSWERS : {}
}

/**
 * Every admin operation reads or writes the database with what it was given, and Postgres text
 * cannot hold a NUL character nor jsonb an unpaired surrogate (util/storable-text.ts). A path id with one names nothing that
 * can exist: 404, as for any unknown id. A query or body field with one is a 400 naming it.
 */
function refuseUnstorableText(params: unknown, query: unknown, body: unknown): void {
  if (findUnstorableText(params) !== undefined) throw new NotFoundError('Not found.')
  for (const [where, value] of [
    [' in the query', query],
    ['', body],
  ] as const) {
    const param = findUnstorableText(value)
    if (param !== undefined) {
      throw new InvalidRequestError(`Invalid value for '${param}'${where}: text cannot contain the NUL character or an unpaired surrogate.`, { param })
    }
  }
}

function refuseUnknownQuery(schema: TObject | undefined, query: AdminFields): void {
  const unknown = Object.keys(query).find((name) => !schema || !Object.hasOwn(schema.properties, name))
  if (unknown !== undefined) {
    const known = schema ? Object.keys(schema.properties) : []
    throw new InvalidRequestError(`Unknown query parameter '${unknown.slice(0, 100)}'${known.length > 0 ? `; this endpoint reads ${known.join(', ')}` : ''}.`, {
      param: unknown,
    })
  }
}

/**
 * A body schema closed to other fields (a key edit) refuses them by name: the framework would
 * otherwise drop them before validation, and a misspelt limit would be left unchanged silently.
 */
function refuseUnknownBody(schema: TObject | undefined, body: unknown): void {
  if (schema?.additionalProperties !== false || typeof body !== 'object' || body === null || Array.isArray(body)) return
  const unknown = Object.keys(body).find((name) => !Object.hasOwn(schema.properties, name))
  if (unknown !== undefined) {
    throw new InvalidRequestError(`Unknown field '${unknown}'; this endpoint reads ${Object.keys(schema.properties).join(', ')}.`, { param: unknown })
  }
}

/**
 * An export streamed as it is read: the next page is fetched when the client has taken the
 * last one, so memory holds one page whatever the selection's size. The first page is read
 * before answering, so a failure there (the database gone) is an ordinary error answer; a
 * failure later ends the stream early, the status line being long gone. A client that leaves
 * stops the reading.
 */
async function exportResponse(result: AdminExport): Promise<Response> {
  const chunks = result.chunks()
  const encoder = new TextEncoder()
  const first = await chunks.next()
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (first.done) controller.close()
        else controller.enqueue(encoder.encode(first.value))
      },
      async pull(controller) {
        const next = await chunks.next()
        if (next.done) controller.close()
        else controller.enqueue(encoder.encode(next.value))
      },
      async cancel() {
        await chunks.return(undefined)
      },
    },
    { highWaterMark: 0 },
  )
  return new Response(stream, {
    headers: { 'content-type': result.contentType, 'content-disposition': `attachment; filename="${result.fileName}"`, 'cache-control': 'no-store' },
  })
}

/** The body's fields; an operation without a body schema reads none, whatever was sent. */
function bodyFields(body: unknown): AdminFields {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body } : {}
}
