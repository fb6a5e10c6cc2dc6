// A fresh embedded database starts from a template: a data directory that initdb made and every
// migration of drizzle/ has run on, as a tar.gz. Running initdb in the gateway itself took about
// 10 s and grew the process to about 1 GB, which WebAssembly memory never gives back; unpacking
// the template takes well under a second. `bun run build` embeds the template in the binary;
// from source it is kept in dist/ and made on first need by a short-lived child process, whose
// memory peak ends with it.
import { createHash } from 'node:crypto'
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import pglitePackage from '../../node_modules/@electric-sql/pglite/package.json'
import { openDatabase } from './client'
import { migrate } from './migrate'
import { migrations } from './migrations.generated'

/** The hidden command of `tollgate` that writes a template: `tollgate __embedded-template <path>`. */
export const TEMPLATE_COMMAND = '__embedded-template'

/** How long the child making a template may take before the start fails (initdb takes about 10 s). */
const TEMPLATE_DEADLINE_MS = 180_000

/**
 * Names the template by what it is made of (the PGlite version and every migration), so a
 * template never serves a different schema or engine than the code that loads it.
 */
export function embeddedTemplateName(): string {
  const hash = createHash('sha256')
  hash.update(pglitePackage.version)
  for (const migration of migrations) hash.update(`\0${migration.tag}\0${migration.sql}`)
  return `embedded-template-${hash.digest('hex').slice(0, 16)}`
}

/** Where the template of this source tree is kept when it runs from source (dist/, next to the binary `bun run build` makes). */
export function sourceTemplatePath(): string {
  return fileURLToPath(new URL(`../../dist/${embeddedTemplateName()}.tar.gz`, import.meta.url))
}

const compiled = import.meta.url.includes('$bunfs')

/**
 * The template for a fresh data directory: the one embedded in the binary, else the one kept in
 * dist/, else a new one made by a child process (and kept for the next fresh directory).
 */
export async function embeddedTemplate(): Promise<Uint8Array> {
  const name = embeddedTemplateName()
  const embedded = Bun.embeddedFiles.find((file) => (file as Blob & { name?: string }).name?.startsWith(name))
  if (embedded) return embedded.bytes()
  // A binary built without its template, or a read-only source tree: the template serves this start only.
  const scratchPath = join(os.tmpdir(), `${name}-${process.pid}.tar.gz`)
  let path = compiled ? scratchPath : sourceTemplatePath()
  if (await Bun.file(path).exists()) return Bun.file(path).bytes()
  try {
    mkdirSync(dirname(path), { recursive: true })
    accessSync(dirname(path), constants.W_OK)
  } catch {
    path = scratchPath
  }
  await makeTemplateInChild(path)
  const bytes = await Bun.file(path).bytes()
  if (path === scratchPath) rmSync(path, { force: true })
  return bytes
}

/** Runs `writeEmbeddedTemplate(path)` in a child process of the same executable. */
async function makeTemplateInChild(path: string): Promise<void> {
  const command = compiled
    ? [process.execPath, TEMPLATE_COMMAND, path]
    : [process.execPath, fileURLToPath(new URL('../main.ts', import.meta.url)), TEMPLATE_COMMAND, path]
  const child = Bun.spawn(command, { stdout: 'ignore', stderr: 'pipe', env: process.env })
  const stderr = new Response(child.stderr).text()
  const timer = setTimeout(() => child.kill('SIGKILL'), TEMPLATE_DEADLINE_MS)
  const code = await child.exited.finally(() => clearTimeout(timer))
  if (code !== 0) {
    const why = child.signalCode === 'SIGKILL' ? `took longer than ${TEMPLATE_DEADLINE_MS / 1000} s` : `exited with ${code}`
    throw new Error(`Creating the embedded database failed: initdb ${why}. ${(await stderr).trim()}`)
  }
}

/**
 * Makes a template at `path`: initdb and the migrations in a scratch directory, shut down
 * cleanly, packed as tar.gz. Written beside `path` and renamed, so a reader never sees half.
 */
export async function writeEmbeddedTemplate(path: string): Promise<void> {
  const scratch = mkdtempSync(join(os.tmpdir(), 'tollgate-template-'))
  try {
    const database = await openDatabase({ dataDir: scratch })
    try {
      await migrate(database.db)
    } finally {
      await database.close()
    }
    const entries: Record<string, Uint8Array> = {}
    collectFiles(scratch, scratch, entries)
    const bytes = await new Bun.Archive(entries, { compress: 'gzip' }).bytes()
    const partial = `${path}.${process.pid}.partial`
    writeFileSync(partial, bytes)
    renameSync(partial, path)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** Every file and directory below `directory`, keyed by its path relative to `root` (directories end in `/`). */
function collectFiles(root: string, directory: string, entries: Record<string, Uint8Array>): void {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name)
    const key = relative(root, path)
    if (statSync(path).isDirectory()) {
      // Postgres needs its empty directories (pg_tblspc, pg_notify, ...) to exist.
      entries[`${key}/`] = new Uint8Array(0)
      collectFiles(root, path, entries)
    } else entries[key] = readFileSync(path)
  }
}
