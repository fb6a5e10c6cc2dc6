import { sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { migrationsApplied } from '../db/migrate'
import { errorResponses, PUBLIC_ERRORS } from '../http/openapi/responses'
import type { Services } from '../services/services'

export function healthEndpoints(services: Pick<Services, 'readiness' | 'db'>) {
  return new Elysia({ name: 'endpoints/health' })
    .get('/v1/healthz', () => ({ status: 'ok' as const }), {
      response: t.Object({ status: t.Literal('ok') }),
      detail: { tags: ['Health'], summary: 'Liveness: the process answers', responses: errorResponses('openai', PUBLIC_ERRORS) },
    })
    .get(
      '/v1/readyz',
      async ({ set }) => {
        // A draining instance answers without asking the database: the answer must come at once.
        if (services.readiness.draining) {
          set.status = 503
          return { status: 'not_ready' as const, draining: true }
        }
        const database = await databaseState(services)
        if (database !== 'ready') {
          set.status = 503
          // Load balancers and clients probing readiness wait this long before asking again.
          set.headers['retry-after'] = '5'
        }
        return { status: database === 'ready' ? ('ready' as const) : ('not_ready' as const), database }
      },
      {
        response: {
          200: t.Object({ status: t.Literal('ready'), database: t.String() }),
          503: t.Object({ status: t.Literal('not_ready'), database: t.Optional(t.String()), draining: t.Optional(t.Boolean()) }),
        },
        detail: {
          tags: ['Health'],
          summary: 'Readiness: the database answers and its migrations are applied',
          description:
            'From a shutdown signal on, 503 with `draining: true` while the instance still serves, so load balancers stop sending to it before it closes.',
          responses: errorResponses('openai', PUBLIC_ERRORS),
        },
      },
    )
}

async function databaseState(services: Pick<Services, 'db'>): Promise<'ready' | 'unreachable' | 'migrations_pending'> {
  try {
    await services.db.execute(sql`select 1`)
  } catch {
    return 'unreachable'
  }
  return (await migrationsApplied(services.db)) ? 'ready' : 'migrations_pending'
}
