// Makes the embedded database template of this source tree in dist/ unless it is there already
// (src/db/embedded-template.ts), and prints its path. `bun run build` and `bun run db:generate` run it.
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

if (import.meta.main) console.log(await ensureSourceTemplate())
