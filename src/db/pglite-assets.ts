// PGlite finds its wasm and data files next to its own module, which a compiled binary does
// not have on disk. Importing them as files makes `bun build --compile` embed them, and
// handing them to PGlite explicitly works the same in both modes.

import initdbWasmPath from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import fsBundlePath from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }
import pgliteWasmPath from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }

export interface PgliteAssets {
  pgliteWasmModule: WebAssembly.Module
  initdbWasmModule: WebAssembly.Module
  fsBundle: Blob
}

let compiled: Promise<PgliteAssets> | undefined

/** Compiled once per process: every embedded database (tests make many) shares the modules. */
export function pgliteAssets(): Promise<PgliteAssets> {
  compiled ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasmPath).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasmPath).arrayBuffer()),
    fsBundle: Bun.file(fsBundlePath),
  }))()
  return compiled
}
