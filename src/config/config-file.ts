import { existsSync, readFileSync } from 'node:fs'
import { creditsToMicros } from '../billing/money'
import { builtinCatalog } from '../catalog/builtin'
import { type CatalogFile, CatalogFileSchema } from '../catalog/catalog-schema'
import { pointerToPath } from '../util/json-pointer'
import { findJsonSyntaxError } from '../util/json-syntax-error'
import { ConfigError, checkConfig } from './config-error'
import type { Env } from './environment'

// The config file (docs/configuration.md#config-file): where a start finds it, and the catalogue it
// declares, checked (its providers are resolved by providers.ts).

/** The source named for the built-in catalogue, when no config file is read. */
export const BUILTIN_SOURCE = 'built-in catalogue'

/** The config file a start reads: `TOLLGATE_CONFIG`, else ./tollgate.json when present, else none (the built-in catalogue). */
export function configFilePath(explicitPath: string | undefined): string | undefined {
  return explicitPath ?? (existsSync('./tollgate.json') ? './tollgate.json' : undefined)
}

/** The config file's text as a start would read it now, or undefined when the built-in catalogue serves. */
export function readConfigFile(env: Env = process.env): string | undefined {
  const path = configFilePath(env.TOLLGATE_CONFIG || undefined)
  return path === undefined ? undefined : readConfigText(path)
}

function readConfigText(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    throw new ConfigError(`${path}: cannot read the config file`)
  }
}

/** The catalogue, and where it came from for messages about it. */
export function loadCatalog(path: string | undefined, env: Env, fileText: string | undefined): { catalog: CatalogFile; source: string } {
  if (!path) return { catalog: builtinCatalog(env), source: BUILTIN_SOURCE }
  // A byte order mark, which some editors write, is not JSON: read past it.
  const text = (fileText ?? readConfigText(path)).replace(/^\uFEFF/, '')
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    const syntax = findJsonSyntaxError(text)
    if (!syntax) throw new ConfigError(`${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`)
    throw new ConfigError(`${path}:${syntax.line}:${syntax.column}: not valid JSON: ${syntax.problem}`, { line: syntax.line, column: syntax.column })
  }
  const catalog = checkConfig(CatalogFileSchema, parsed, path, pointerToPath)
  checkReferences(catalog, path)
  return { catalog, source: path }
}

/** What the schema cannot say: references between entries and unique ids. */
function checkReferences(catalog: CatalogFile, file: string): void {
  const fail = (path: string, message: string): never => {
    throw new ConfigError(`${file}: ${path}: ${message}`)
  }
  const ids = new Set<string>()
  catalog.models.forEach((model, index) => {
    const vendor = model.id.split('/')[0]
    if (vendor === 'tollgate' || vendor === 'custom') fail(`models[${index}].id`, `the prefix "${vendor}/" is reserved`)
    if (ids.has(model.id)) fail(`models[${index}].id`, `duplicate model id "${model.id}"`)
    ids.add(model.id)
    model.routes.forEach((route, routeIndex) => {
      if (!catalog.providers[route.provider]) fail(`models[${index}].routes[${routeIndex}].provider`, `unknown provider "${route.provider}"`)
    })
    for (const [unit, price] of Object.entries(model.pricing)) {
      if (creditsToMicros(price) === undefined) fail(`models[${index}].pricing.${unit}`, 'prices have at most 6 decimals')
    }
    if (model.type === 'video' && !model.videoFamily) fail(`models[${index}].videoFamily`, 'video models need "A" or "B"')
    // Family B's lengths are fixed by its API (4, 8, 12; docs/configuration.md#video-models): only family A lists its own.
    if (model.videoDurations && (model.type !== 'video' || model.videoFamily !== 'A'))
      fail(`models[${index}].videoDurations`, 'only family A video models list their durations')
  })
  const chatModels = new Set(catalog.models.filter((model) => model.type === 'chat').map((model) => model.id))
  catalog.aliases?.forEach((alias, index) => {
    if (ids.has(alias.id)) fail(`aliases[${index}].id`, `duplicate id "${alias.id}"`)
    ids.add(alias.id)
    alias.targets.forEach((target, targetIndex) => {
      if (!chatModels.has(target)) fail(`aliases[${index}].targets[${targetIndex}]`, `"${target}" is not a chat model of this catalogue`)
    })
  })
}
