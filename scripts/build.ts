// `bun run build`: the single-file binary dist/tollgate, with the embedded database template
// (src/db/embedded-template.ts) inside it, so a first start on a fresh machine runs no initdb.
import { ensureSourceTemplate } from './embedded-template'

const template = await ensureSourceTemplate()
const build = Bun.spawnSync(
  // The bundle's root is fixed (src/media/resize-image.ts and src/db/pglite-thread.ts find their threads' entries by their paths under it).
  [
    'bun',
    'build',
    '--compile',
    '--minify-syntax',
    '--sourcemap=none',
    '--root',
    '.',
    'src/main.ts',
    'src/media/image-worker.ts',
    'src/db/pglite-worker.ts',
    template,
    '--outfile',
    'dist/tollgate',
  ],
  { stdout: 'inherit', stderr: 'inherit' },
)
process.exit(build.exitCode)
