import { isRecord } from './is-record'

/**
 * Postgres text and jsonb cannot hold U+0000 (PGlite neither), and jsonb refuses an unpaired
 * surrogate (`"\ud83d"`, which JSON allows): a string with either fails any statement it is a
 * parameter of, as a 500. So such a value is turned away before it reaches a query: a lookup by
 * id answers not found (no stored id can contain it), any other field is a 400 naming it. This
 * is the one check every edge uses.
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text)
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The path (`defaults.stop[0]`) of the first string in a JSON value, or object key, that the
 * database could not store; undefined when there is none. `path` names the value itself.
 */
export function findUnstorableText(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findUnstorableText(item, `${path}[${index}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (isRecord(value)) {
    for (const [name, item] of Object.entries(value)) {
      const itemPath = path ? `${path}.${name}` : name
      if (!isStorableText(name)) return itemPath
      const found = findUnstorableText(item, itemPath)
      if (found !== undefined) return found
    }
  }
  return undefined
}
