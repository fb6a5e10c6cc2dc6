import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * House rules about the shape of src/, checked on the source text alone (no app, no database).
 * Each failure lists every offender, so one run shows all that is left to fix.
 */

const ROOT = resolve(import.meta.dir, '..')
const SRC = join(ROOT, 'src')

interface SourceFile {
  /** Repo-relative, with forward slashes: `src/auth/users.ts`. */
  path: string
  text: string
  /** The text with comments and string contents blanked out (same length, same line breaks). */
  code: string
  comments: { text: string; offset: number }[]
}

function sourcesUnder(folder: string): SourceFile[] {
  return [...new Bun.Glob(`${folder}/**/*.{ts,tsx,mts,cts}`).scanSync({ cwd: ROOT })]
    .map((path) => path.replaceAll('\\', '/'))
    .sort()
    .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }))
    .map(({ path, text }) => ({ path, text, ...scan(text) }))
}

const SOURCES = sourcesUnder('src')
/** The tests and their support: their comments cite documents as src/'s do. */
const TEST_SOURCES = sourcesUnder('test')

function lineOf(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/** A failure message: the rule, then one offender a line. */
function report(rule: string, offenders: string[]): string {
  return offenders.length === 0 ? '' : `${rule} (${offenders.length}):\n  ${offenders.join('\n  ')}\n`
}

// ---------------------------------------------------------------------------------------------
// Folder cycles

/**
 * The folder of src/ a file belongs to: its first folder, or ROOT_NODE for the files at the root
 * of src/ (the entry and the composition root), checked as one more folder; undefined for files
 * outside src/.
 */
function folderOf(absolutePath: string): string | undefined {
  const parts = relative(SRC, absolutePath).split(/[\\/]/)
  if (parts[0] === '..' || parts[0] === '') return undefined
  return parts.length < 2 ? ROOT_NODE : parts[0]
}

/** The name the files at the root of src/ go by in the folder graph. */
const ROOT_NODE = '(root)'

/** Module specifiers: static imports and re-exports (`import type` included), side-effect imports, dynamic imports. */
function importsOf(code: string, text: string): string[] {
  const specifiers: string[] = []
  // Strings are blanked in `code`, so find the statement shape there and read the specifier from `text`.
  const pattern = /\b(?:from\s*|import\s*\(\s*|import\s+|require\s*\(\s*)(['"])/g
  for (const match of code.matchAll(pattern)) {
    const start = match.index + match[0].length
    const end = text.indexOf(match[1] ?? "'", start)
    if (end > start) specifiers.push(text.slice(start, end))
  }
  return specifiers
}

interface FolderEdge {
  from: string
  to: string
  /** `src/a/x.ts → ../b/y` for each import making this edge. */
  via: string[]
}

function folderEdges(): Map<string, FolderEdge> {
  const edges = new Map<string, FolderEdge>()
  for (const file of SOURCES) {
    const from = folderOf(join(ROOT, file.path))
    if (!from) continue
    for (const specifier of importsOf(file.code, file.text)) {
      if (!specifier.startsWith('.')) continue
      const to = folderOf(resolve(ROOT, dirname(file.path), specifier))
      if (!to || to === from) continue
      const key = `${from} -> ${to}`
      const edge = edges.get(key) ?? { from, to, via: [] }
      edge.via.push(`${file.path} imports '${specifier}'`)
      edges.set(key, edge)
    }
  }
  return edges
}

/**
 * Imports between files of the same folder of src/ (its subfolders included), as edges from
 * file to file: the same shape as folderEdges, one level down.
 */
function fileEdges(): Map<string, FolderEdge> {
  const edges = new Map<string, FolderEdge>()
  const paths = new Set(SOURCES.map((file) => file.path))
  for (const file of SOURCES) {
    const folder = folderOf(join(ROOT, file.path))
    if (!folder) continue
    for (const specifier of importsOf(file.code, file.text)) {
      if (!specifier.startsWith('.')) continue
      const target = relative(ROOT, resolve(ROOT, dirname(file.path), specifier)).replaceAll('\\', '/')
      const to = [`${target}.ts`, `${target}/index.ts`, target].find((path) => paths.has(path))
      if (!to || to === file.path || folderOf(join(ROOT, to)) !== folder) continue
      const key = `${file.path} -> ${to}`
      edges.set(key, { from: file.path, to, via: [`imports '${specifier}'`] })
    }
  }
  return edges
}

/** Strongly connected components with more than one node (Tarjan): folders, or files. */
function cycles(edges: Map<string, FolderEdge>): string[][] {
  const next = new Map<string, string[]>()
  for (const { from, to } of edges.values()) {
    next.set(from, [...(next.get(from) ?? []), to])
    if (!next.has(to)) next.set(to, [])
  }
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node) ?? 0)
    stack.push(node)
    onStack.add(node)
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack.delete(member)
        component.push(member)
        if (member === node) break
      }
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node)
  return components
}

/** One import or re-export of a file, with the values it brings (a type-only import brings none). */
interface ValueImport {
  /** The imported module, repo-relative and without its extension: `src/dispatch/dispatcher`. */
  target: string
  /** The names bound as values; `*` for a namespace, a side-effect import or a dynamic import. */
  values: string[]
}

/** Every import and re-export from a relative path, with the value names each binds. */
function valueImportsOf(file: SourceFile): ValueImport[] {
  const imports: ValueImport[] = []
  const targetOf = (start: number, quote: string) => {
    const end = file.text.indexOf(quote, start)
    const specifier = file.text.slice(start, end)
    return specifier.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file.path), specifier)).replaceAll('\\', '/') : undefined
  }
  // Strings are blanked in `code` (their quotes kept): the clause is read there, the specifier from `text`.
  for (const match of file.code.matchAll(/\b(?:import|export)\s+(type\s+)?([\w\s{},*$]*?)\s*\bfrom\s*(['"])/g)) {
    const target = targetOf(match.index + match[0].length, match[3] ?? "'")
    if (!target || match[1]) continue
    const values = (match[2] ?? '')
      .replace(/[{}]/g, ',')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && !name.startsWith('type '))
      .map((name) => (name.startsWith('*') ? '*' : (name.split(/\s+as\s+/)[0] ?? name)))
    imports.push({ target, values })
  }
  for (const match of file.code.matchAll(/\bimport\s*(?:\(\s*)?(['"])/g)) {
    const target = targetOf(match.index + match[0].length, match[1] ?? "'")
    if (target) imports.push({ target, values: ['*'] })
  }
  return imports
}

/**
 * The values a file of src/surfaces/ may import from src/dispatch/: the endpoint's handler hands
 * the request to the dispatcher, and that is all. A surface describes its call in dispatch's types
 * (dispatch/surface.ts); the dispatcher calls it, never the other way round.
 */
const SURFACE_VALUES_FROM_DISPATCH: Record<string, string[]> = { 'src/surfaces/endpoint.ts': ['src/dispatch/dispatcher dispatch'] }

// ---------------------------------------------------------------------------------------------
// Doc citations

const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/

/** GitHub's anchors for a markdown file's headings (duplicates get -1, -2, …). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fenceMatch?.[1]) {
      if (fence === undefined) fence = fenceMatch[1]
      else if (fenceMatch[1].startsWith(fence)) fence = undefined
      continue
    }
    if (fence !== undefined) continue
    const heading = HEADING.exec(line)?.[2]
    if (heading === undefined) continue
    const base = githubSlug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, '')
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** A docs/ path with or without an anchor, a bare file name, a relative path: anything naming a markdown file. */
const CITATION = /[\w./:@~-]*\.mdx?\b(?:#[\w-]+)?/g

function citationProblem(citation: string): string | undefined {
  if (/^[a-z]+:\/\//i.test(citation)) return 'cites a document outside the repo; cite docs/<file>.md'
  const [file = '', anchor] = citation.split('#')
  if (!file.startsWith('docs/')) return 'cite documents by their repo path, docs/<file>.md'
  const path = join(ROOT, file)
  if (!existsSync(path)) return `${file} does not exist`
  if (anchor === undefined) return undefined
  if (!anchorsOf(readFileSync(path, 'utf8')).has(anchor)) return `${file} has no heading with the anchor #${anchor}`
  return undefined
}

// ---------------------------------------------------------------------------------------------

describe('architecture of src/', () => {
  test('no import cycle between folders of src/ (the files at its root counted as one more folder)', () => {
    const edges = folderEdges()
    const offenders = cycles(edges).map((component) => {
      const inside = [...edges.values()].filter((edge) => component.includes(edge.from) && component.includes(edge.to))
      const lines = inside.flatMap((edge) => [`  ${edge.from} -> ${edge.to}`, ...edge.via.map((via) => `      ${via}`)])
      return [`cycle among ${component.join(', ')}:`, ...lines].join('\n  ')
    })
    expect(report('Import cycles between folders of src/', offenders)).toBe('')
  })

  test('no import cycle between the files of one folder of src/ (type imports included)', () => {
    const edges = fileEdges()
    const offenders = cycles(edges).map((component) => {
      const inside = [...edges.values()].filter((edge) => component.includes(edge.from) && component.includes(edge.to))
      return [`cycle among ${component.join(', ')}:`, ...inside.map((edge) => `  ${edge.from} -> ${edge.to}`)].join('\n  ')
    })
    expect(report('Import cycles between files of a folder (move the shared types into a module both import)', offenders)).toBe('')
  })

  test('src/surfaces/ imports only types from src/dispatch/, but for the endpoint handing the request to the dispatcher', () => {
    const offenders = SOURCES.filter((file) => file.path.startsWith('src/surfaces/')).flatMap((file) =>
      valueImportsOf(file)
        .filter(({ target }) => target.startsWith('src/dispatch/'))
        .flatMap(({ target, values }) => values.map((value) => `${target} ${value}`))
        .filter((imported) => !(SURFACE_VALUES_FROM_DISPATCH[file.path] ?? []).includes(imported))
        .map((imported) => `${file.path} imports ${imported.replace(' ', ': ')}`),
    )
    expect(
      report('Values imported by src/surfaces/ from src/dispatch/ (describe the call in the types of dispatch/surface.ts; the dispatcher calls)', offenders),
    ).toBe('')
  })

  test('no `as Record<string, unknown>` outside src/http/', () => {
    const offenders = SOURCES.filter((file) => !file.path.startsWith('src/http/')).flatMap((file) =>
      [...file.code.matchAll(/\bas\s+Record\s*<\s*string\s*,\s*unknown\s*>/g)].map((match) => `${file.path}:${lineOf(file.text, match.index)}`),
    )
    expect(report('Casts to Record<string, unknown> (narrow the value, or parse it at the edge in src/http/)', offenders)).toBe('')
  })

  test('free-form objects (`Record<string, unknown>`, `JsonObject`) appear at most 20 times in src/, each named boundary type with a comment saying why', () => {
    const FREE_FORM = /\bRecord\s*<\s*string\s*,\s*unknown\s*>|\bJsonObject\b/g
    const uses = SOURCES.flatMap((file) => [...file.code.matchAll(FREE_FORM)].map((match) => ({ file, at: match.index })))
    const places = uses.map(({ file, at }) => `${file.path}:${lineOf(file.text, at)}`)
    expect(uses.length <= 20 ? '' : report('Free-form objects beyond the budget of 20 (type the value with its wire or domain type)', places)).toBe('')
    // A type that names a free-form object says, in its doc comment, why the value is free-form.
    const undocumented = SOURCES.flatMap((file) =>
      [...file.code.matchAll(/^(?:export )?type (\w+) = (?:Record\s*<\s*string\s*,\s*unknown\s*>|JsonObject)\s*$/gm)]
        .filter((match) => !/\*\/\s*$/.test(file.text.slice(0, match.index)))
        .map((match) => `${file.path}:${lineOf(file.text, match.index)} ${match[1]}`),
    )
    expect(report('Free-form type aliases without a doc comment saying why', undocumented)).toBe('')
  })

  test('no non-null assertion (`value!`) and no `any` in src/', () => {
    // Biome's own rules, run on src/ alone: they read the syntax tree, so `!==` and `!value` never count.
    const run = Bun.spawnSync(
      [
        process.execPath,
        join(ROOT, 'node_modules/@biomejs/biome/bin/biome'),
        'lint',
        '--only=style/noNonNullAssertion',
        '--only=suspicious/noExplicitAny',
        '--reporter=github',
        '--max-diagnostics=none',
        '--colors=off',
        'src',
      ],
      { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
    )
    const output = run.stdout.toString()
    const offenders = [...output.matchAll(/^::\w+ title=lint\/\w+\/(\w+),file=([^,]+),line=(\d+),.*?::(.*)$/gm)].map(
      ([, rule, file = '', line]) => `${relative(ROOT, file).replaceAll('\\', '/')}:${line} ${rule}`,
    )
    if (offenders.length === 0) expect(run.exitCode, `biome did not run cleanly:\n${run.stderr.toString()}${output}`).toBe(0)
    expect(report('Non-null assertions and `any` in src/', offenders)).toBe('')
  })

  test('every markdown document cited in a comment in src/ or test/ is docs/<file>.md in this repo, with the cited heading', () => {
    const offenders = [...SOURCES, ...TEST_SOURCES].flatMap((file) =>
      file.comments.flatMap((comment) =>
        [...comment.text.matchAll(CITATION)].flatMap((match) => {
          const problem = citationProblem(match[0].replace(/^\.\//, ''))
          return problem ? [`${file.path}:${lineOf(file.text, comment.offset + match.index)} ${match[0]}: ${problem}`] : []
        }),
      ),
    )
    expect(report('Document citations in src/ and test/ that lead nowhere', offenders)).toBe('')
  })

  test('every source path the docs and the README name exists', () => {
    const documents = ['README.md', ...[...new Bun.Glob('docs/*.md').scanSync({ cwd: ROOT })].sort()]
    const offenders = documents.flatMap((document) =>
      [...readFileSync(join(ROOT, document), 'utf8').matchAll(/`((?:src|test)\/[\w./-]+?)`/g)].flatMap((match) => {
        const path = match[1] ?? ''
        return existsSync(join(ROOT, path)) ? [] : [`${document}: ${path}`]
      }),
    )
    expect(report('Paths named in the docs that are not in the repo', offenders)).toBe('')
  })

  test('test/ mirrors src/: each folder of test/ is a folder of src/, or one of the shared harness folders', () => {
    const folders = (root: string) =>
      readdirSync(join(ROOT, root), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
    const sourceFolders = new Set(folders('src'))
    const offenders = folders('test').filter((folder) => !sourceFolders.has(folder) && !TEST_HARNESS_FOLDERS.has(folder))
    expect(report('Folders of test/ that name no folder of src/ (move their tests where their subject lives)', offenders)).toBe('')
  })
})

/**
 * The folders of test/ that test no one folder of src/: helpers, recorded fixtures, the mock
 * upstream, the official SDKs and coding agents driven end to end, the fuzzer.
 */
const TEST_HARNESS_FOLDERS = new Set(['support', 'fixtures', 'upstream', 'clients', 'fuzz'])

// ---------------------------------------------------------------------------------------------
// A small TypeScript scanner: enough to tell comments, strings and code apart.

/** Splits source text into code (comments and string contents blanked) and its comments. */
function scan(text: string): Pick<SourceFile, 'code' | 'comments'> {
  const code = text.split('')
  const comments: SourceFile['comments'] = []
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (code[i] !== '\n') code[i] = ' '
  }
  /** Template literals open `${` holes; the stack remembers the brace depth each hole closes at. */
  const holes: number[] = []
  let depth = 0
  let lastSignificant = ''
  let i = 0
  const readString = (quote: string, start: number): number => {
    let j = start + 1
    while (j < text.length && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1
    blank(start + 1, Math.min(j, text.length))
    return j + 1
  }
  const readTemplate = (start: number): number => {
    let j = start
    while (j < text.length && text[j] !== '`') {
      if (text[j] === '\\') j += 2
      else if (text[j] === '$' && text[j + 1] === '{') {
        blank(start, j)
        holes.push(depth)
        depth++
        return j + 2
      } else j++
    }
    blank(start, Math.min(j, text.length))
    return j + 1
  }
  while (i < text.length) {
    const char = text[i] ?? ''
    const following = text[i + 1]
    if (char === '/' && following === '/') {
      const end = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i)
      comments.push({ text: text.slice(i, end), offset: i })
      blank(i, end)
      i = end
    } else if (char === '/' && following === '*') {
      const close = text.indexOf('*/', i + 2)
      const end = close === -1 ? text.length : close + 2
      comments.push({ text: text.slice(i, end), offset: i })
      blank(i, end)
      i = end
    } else if (char === "'" || char === '"') {
      i = readString(char, i)
      lastSignificant = char
    } else if (char === '`') {
      i = readTemplate(i + 1)
      lastSignificant = '`'
    } else if (char === '/' && regexMayStartAfter(lastSignificant)) {
      let j = i + 1
      let inClass = false
      while (j < text.length && text[j] !== '\n') {
        if (text[j] === '\\') j++
        else if (text[j] === '[') inClass = true
        else if (text[j] === ']') inClass = false
        else if (text[j] === '/' && !inClass) break
        j++
      }
      blank(i + 1, j)
      i = j + 1
      lastSignificant = '/'
    } else if (char === '{') {
      depth++
      lastSignificant = char
      i++
    } else if (char === '}') {
      depth--
      if (holes.length > 0 && holes[holes.length - 1] === depth) {
        holes.pop()
        i = readTemplate(i + 1)
        lastSignificant = '`'
      } else {
        lastSignificant = char
        i++
      }
    } else {
      if (/\w/.test(char)) {
        let j = i
        while (j < text.length && /[\w$]/.test(text[j] ?? '')) j++
        lastSignificant = text.slice(i, j)
        i = j
      } else {
        if (!/\s/.test(char)) lastSignificant = char
        i++
      }
    }
  }
  return { code: code.join(''), comments }
}

/** A `/` after an operator, an opening bracket or one of these keywords starts a regular expression literal, not a division. */
function regexMayStartAfter(token: string): boolean {
  return token === '' || /[(,=:[!&|?{};+\-*%<>~^]$/.test(token) || /^(?:return|typeof|case|of|in|void|delete|throw|yield|await)$/.test(token)
}
