import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { openDatabase, type DatabaseHandle } from '../../src/db/client'
import { embeddedTemplate } from '../../src/db/embedded-template'
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
    await admin.unsafe(`create database ${name}`)
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    const handle = await openDatabase({ url: url.toString() })
    if (migrated) await migrate(handle.db)
    return {
      ...handle,
      url: url.toString(),
      async close() {
        await handle.close()
        await admin.unsafe(`drop database if exists ${name} with (force)`)
        await admin.end()
      },
    }
  },
}

export const testDatabases: TestDatabase[] = serverUrl ? [pglite, postgresServer] : [pglite]
