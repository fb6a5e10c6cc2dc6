// Runs as a Bun macro (docs/operations.md#console): wherever src/console/assets.ts is
// transpiled (from source, in tests, or by `bun build --compile`), the console's browser code
// is bundled here and its text inlined, so the binary carries it and nothing is fetched later.
// A macro may not call Bun.build itself (the bundler would wait on itself): the CLI is run.

/** The console's browser script, bundled and minified, as text. */
export function consoleScript(): string {
  const entry = `${import.meta.dir}/web/main.ts`
  const result = Bun.spawnSync([process.execPath, 'build', entry, '--target=browser', '--format=esm', '--minify'], {
    env: { ...process.env, NO_COLOR: '1' },
  })
  if (!result.success) throw new Error(`The console did not bundle: ${result.stderr.toString()}`)
  return result.stdout.toString()
}
