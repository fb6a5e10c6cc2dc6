// Makes the embedded database template of this source tree in dist/ unless it is there already
// (src/db/embedded-template.ts), and prints its path. `bun install`, `bun run build` and
// `bun run db:generate` run it, so the first `bun start` on a fresh checkout reads it too.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { sourceTemplatePath, writeEmbeddedTemplate } from '../src/db/embedded-template'

export async function ensureSourceTemplate(): Promise<string> {
  const path = sourceTemplatePath()
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true })
    await writeEmbeddedTemplate(path)
  }
  // Templates of older migrations serve nothing any more.
  for (const name of readdirSync(dirname(path))) {
    if (name.startsWith('embedded-template-') && name.endsWith('.tar.gz') && name !== basename(path)) rmSync(join(dirname(path), name), { force: true })
  }
  return path
}

if (import.meta.main) {
  // `bun install` runs it with --best-effort: an install never fails for it, the first start makes the template instead.
  const bestEffort = process.argv.includes('--best-effort')
  try {
    console.log(await ensureSourceTemplate())
  } catch (error) {
    if (!bestEffort) throw error
    console.warn(`the embedded database template was not made now (the first start will make it): ${error instanceof Error ? error.message : String(error)}`)
  }
}
