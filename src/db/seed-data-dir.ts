import { existsSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The file Postgres (and PGlite) takes as the sign that a data directory holds a database. It is
 * written last, so a directory that has it is complete.
 */
const COMPLETE_MARK = 'PG_VERSION'

/** True when `dataDir` holds a database (complete, or written by an older Tollgate). */
export function holdsDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, COMPLETE_MARK))
}

/**
 * Writes the migrated database of `template` (a tar.gz of a data directory, see
 * embedded-template.ts) into `dataDir`: every file but the mark first, then the mark. A first
 * start killed half-way leaves no mark, and the next start writes the same files again over it.
 */
export async function seedDataDir(dataDir: string, template: Uint8Array): Promise<void> {
  const archive = new Bun.Archive(template)
  await archive.extract(dataDir, { glob: ['**', `!${COMPLETE_MARK}`] })
  const marks = await archive.extract(dataDir, { glob: COMPLETE_MARK })
  if (marks !== 1) throw new Error(`The embedded database template has no ${COMPLETE_MARK}: rebuild it (bun scripts/embedded-template.ts).`)
}
