import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { type DatabaseHandle, openDatabase } from '../../src/db/client'
import { embeddedTemplate, embeddedTemplateName } from '../../src/db/embedded-template'
import { migrate } from '../../src/db/migrate'
import { seedDataDir } from '../../src/db/seed-data-dir'
import { randomToken } from '../../src/util/ids'

/**
 * The databases every database test runs on: embedded PGlite always, and the Postgres server
 * of DATABASE_URL when it is set. Each `open()` makes a fresh, migrated database of its own.
 */
export interface TestDatabase {
  kind: 'pglite' | 'postgres'
  open(options?: { migrated?: boolean }): Promise<FreshDatabase>
}

export interface FreshDatabase extends DatabaseHandle {
  /** For Postgres, the URL of this database (for child processes). */
  url: string | undefined
}

const serverUrl = process.env.DATABASE_URL

/** The embedded template's bytes, read once per test process. */
let template: Promise<Uint8Array> | undefined

const pglite: TestDatabase = {
  kind: 'pglite',
  async open({ migrated = true } = {}) {
    if (!migrated) return { ...(await openDatabase({})), url: undefined }
    // A migrated database is the embedded template unpacked (a few hundred ms), not initdb and
    // every migration run again (one to three seconds).
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-test-'))
    template ??= embeddedTemplate()
    await seedDataDir(dataDir, await template)
    const handle = await openDatabase({ dataDir })
    return {
      ...handle,
      url: undefined,
      async close() {
        await handle.close()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  },
}

const postgresServer: TestDatabase = {
  kind: 'postgres',
  async open({ migrated = true } = {}) {
    if (!serverUrl) throw new Error('DATABASE_URL is not set')
    const name = `tollgate_test_${randomToken(12).toLowerCase()}`
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
    if (migrated) {
      postgresTemplate ??= migratedTemplate(admin)
      await admin.unsafe(`create database ${name} template ${await postgresTemplate}`)
    } else await admin.unsafe(`create database ${name}`)
    const url = databaseUrl(name)
    const handle = await openDatabase({ url })
    return {
      ...handle,
      url,
      async close() {
        await handle.close()
        await admin.unsafe(`drop database if exists ${name} with (force)`)
        await admin.end()
      },
    }
  },
}

function databaseUrl(name: string): string {
  const url = new URL(serverUrl ?? '')
  url.pathname = `/${name}`
  return url.toString()
}

/** The migrated database Postgres test databases are copies of, made once per test process. */
let postgresTemplate: Promise<string> | undefined

/**
 * A database every migration has run on, named by the schema it holds (the embedded template's
 * name hashes the migrations), which `create database … template` copies: a copy takes a
 * fraction of running every migration again. It is built under a name of its own and renamed
 * when complete, so a run never copies a half-built one, and two runs that build it at once
 * keep the first and drop the other. It stays on the server for the next run with the same
 * migrations; nothing connects to it after it is built, as copying requires.
 */
async function migratedTemplate(admin: postgres.Sql): Promise<string> {
  const name = `tollgate_template_${embeddedTemplateName().slice(-16)}`
  if ((await admin`select 1 from pg_database where datname = ${name}`).length > 0) return name
  const building = `${name}_${randomToken(8).toLowerCase()}`
  await admin.unsafe(`create database ${building}`)
  const handle = await openDatabase({ url: databaseUrl(building) })
  try {
    await migrate(handle.db)
  } finally {
    await handle.close()
  }
  try {
    await admin.unsafe(`alter database ${building} rename to ${name}`)
  } catch {
    // Another run built it meanwhile: theirs is the same schema.
    await admin.unsafe(`drop database if exists ${building} with (force)`)
  }
  return name
}

export const testDatabases: TestDatabase[] = serverUrl ? [pglite, postgresServer] : [pglite]
