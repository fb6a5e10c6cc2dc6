import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { sql } from 'drizzle-orm'
import { ensureSourceTemplate } from '../../scripts/embedded-template'
import { type DatabaseHandle, openDatabase } from '../../src/db/client'
import { TEMPLATE_COMMAND } from '../../src/db/embedded-template'
import { migrationsApplied } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.generated'
import { openConfiguredDatabase } from '../../src/db/open'
import { holdsDatabase, seedDataDir } from '../../src/db/seed-data-dir'

const directories: string[] = []
function freshDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-embedded-start-'))
  directories.push(directory)
  return directory
}

let template: Uint8Array
beforeAll(async () => {
  // Made once per source tree (about 10 s), then read from dist/.
  template = await Bun.file(await ensureSourceTemplate()).bytes()
}, 180_000)
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
})

async function appliedTags(database: DatabaseHandle): Promise<string[]> {
  return (await database.rows<{ tag: string }>(sql`select tag from tollgate_migrations order by tag`)).map((row) => row.tag)
}

async function accountNames(database: DatabaseHandle): Promise<string[]> {
  return (await database.rows<{ name: string }>(sql`select name from accounts order by name`)).map((row) => row.name)
}

/** The database system identifier: the first 8 bytes of pg_control, drawn at random by initdb. */
function systemIdentifier(pgControl: Uint8Array): string {
  return Buffer.from(pgControl.subarray(0, 8)).toString('hex')
}

async function templateSystemIdentifier(): Promise<string> {
  const control = (await new Bun.Archive(template).files()).get('global/pg_control')
  if (!control) throw new Error('the template has no global/pg_control')
  return systemIdentifier(await control.bytes())
}

const everyTag = migrations.map((migration) => migration.tag)

describe('a fresh embedded database starts from the migrated template', () => {
  test('the template holds every migration of drizzle/ before anything migrates it', async () => {
    const dataDir = freshDirectory()
    await seedDataDir(dataDir, template)
    const database = await openDatabase({ dataDir })
    try {
      expect(await appliedTags(database)).toEqual(everyTag)
    } finally {
      await database.close()
    }
  })

  test('a first start on a fresh directory comes up migrated, and a restart keeps its data', async () => {
    const dataDir = freshDirectory()
    const first = await openConfiguredDatabase({ databaseUrl: undefined, dataDir })
    try {
      expect(first.kind).toBe('pglite')
      expect(await appliedTags(first)).toEqual(everyTag)
      // Seeded, not made by initdb here: initdb would have drawn a new system identifier.
      expect(systemIdentifier(await Bun.file(join(dataDir, 'global', 'pg_control')).bytes())).toBe(await templateSystemIdentifier())
      await first.rows(sql`insert into accounts (id, name) values ('acct_kept', 'kept across the restart')`)
    } finally {
      await first.close()
    }
    const restarted = await openConfiguredDatabase({ databaseUrl: undefined, dataDir })
    try {
      expect(await accountNames(restarted)).toEqual(['kept across the restart'])
      expect(await migrationsApplied(restarted.db)).toBe(true)
    } finally {
      await restarted.close()
    }
  })

  test('a directory PGlite made itself (before the template) still opens, keeps its data and gets the migrations it lacks', async () => {
    const dataDir = freshDirectory()
    // The old path: PGlite runs initdb in this process; only the older migrations are applied.
    const old = await openDatabase({ dataDir })
    const older = migrations.slice(0, -1)
    try {
      await old.rows(sql`create table tollgate_migrations (tag text primary key, applied_at timestamptz not null default now())`)
      for (const migration of older) {
        for (const statement of migration.sql.split('--> statement-breakpoint')) if (statement.trim()) await old.rows(sql.raw(statement))
        await old.rows(sql`insert into tollgate_migrations (tag) values (${migration.tag})`)
      }
      await old.rows(sql`insert into accounts (id, name) values ('acct_old', 'made before the template')`)
    } finally {
      await old.close()
    }
    const database = await openConfiguredDatabase({ databaseUrl: undefined, dataDir })
    try {
      expect(await appliedTags(database)).toEqual(everyTag)
      expect(await accountNames(database)).toEqual(['made before the template'])
    } finally {
      await database.close()
    }
  }, 180_000)

  test('a first start killed while it wrote the template is written again by the next start', async () => {
    const dataDir = freshDirectory()
    await seedDataDir(dataDir, template)
    // What a kill part-way leaves: the mark not yet written and some files missing.
    unlinkSync(join(dataDir, 'PG_VERSION'))
    unlinkSync(join(dataDir, 'global', 'pg_control'))
    rmSync(join(dataDir, 'base'), { recursive: true })
    expect(holdsDatabase(dataDir)).toBe(false)
    const database = await openConfiguredDatabase({ databaseUrl: undefined, dataDir })
    try {
      expect(await appliedTags(database)).toEqual(everyTag)
    } finally {
      await database.close()
    }
  })

  test('a broken directory that claims to hold a database is refused with what to do, not opened half', async () => {
    const dataDir = freshDirectory()
    await seedDataDir(dataDir, template)
    // An older Tollgate's first start killed part-way could leave this: the mark, no control file.
    unlinkSync(join(dataDir, 'global', 'pg_control'))
    const refusal = await openConfiguredDatabase({ databaseUrl: undefined, dataDir }).then(
      async (database) => {
        await database.close()
        return 'opened'
      },
      (error: Error) => error.message,
    )
    expect(refusal).toContain(`The embedded database in ${dataDir} could not be opened`)
    expect(refusal).toContain('delete the directory and start again')
    // The refusal released the lock: nothing holds the directory.
    expect(existsSync(join(dataDir, 'tollgate.pid'))).toBe(false)
  })

  test(`the hidden ${TEMPLATE_COMMAND} command writes a template that seeds a migrated database`, async () => {
    const directory = freshDirectory()
    const path = join(directory, 'template.tar.gz')
    const child = Bun.spawn(['bun', resolve('src/main.ts'), TEMPLATE_COMMAND, path], { stdout: 'ignore', stderr: 'pipe' })
    expect(await child.exited).toBe(0)
    const dataDir = join(directory, 'data')
    await seedDataDir(dataDir, await Bun.file(path).bytes())
    const database = await openDatabase({ dataDir })
    try {
      expect(await appliedTags(database)).toEqual(everyTag)
    } finally {
      await database.close()
    }
  }, 180_000)
})
