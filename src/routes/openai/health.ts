import { sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { migrationsApplied } from '../../db/migrate'
import type { Services } from '../../services'

export function healthRoutes(services: Services) {
  return new Elysia({ name: 'routes/health' })
    .get('/v1/healthz', () => ({ status: 'ok' as const }), {
      response: t.Object({ status: t.Literal('ok') }),
      detail: { tags: ['Health'], summary: 'Liveness: the process answers' },
    })
    .get(
      '/v1/readyz',
      async ({ set }) => {
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
          503: t.Object({ status: t.Literal('not_ready'), database: t.String() }),
        },
        detail: { tags: ['Health'], summary: 'Readiness: the database answers and its migrations are applied' },
      },
    )
}

async function databaseState(services: Services): Promise<'ready' | 'unreachable' | 'migrations_pending'> {
  try {
    await services.db.execute(sql`select 1`)
  } catch {
    return 'unreachable'
  }
  return (await migrationsApplied(services.db)) ? 'ready' : 'migrations_pending'
}
