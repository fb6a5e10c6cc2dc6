import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { generatedPath, renderMigrationsModule } from '../../scripts/embed-migrations'
import { migrate, migrationsApplied } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.generated'
import { testDatabases } from '../support/databases'

describe('migrations', () => {
  test('the embedded list matches drizzle/ (run `bun run db:generate` after changing the schema)', () => {
    expect(readFileSync(generatedPath, 'utf8')).toBe(renderMigrationsModule())
  })

  for (const kind of testDatabases) {
    test(`apply once, idempotently, also when instances start together (${kind.kind})`, async () => {
      const database = await kind.open({ migrated: false })
      try {
        expect(await migrationsApplied(database.db)).toBe(false)
        const runs = await Promise.all([migrate(database.db), migrate(database.db), migrate(database.db)])
        expect(runs.flat()).toEqual(migrations.map((migration) => migration.tag))
        expect(await migrate(database.db)).toEqual([])
        expect(await migrationsApplied(database.db)).toBe(true)
      } finally {
        await database.close()
      }
      // An unmigrated embedded database is made by initdb in the test process: seconds on a busy machine.
    }, 60_000)
  }
})
