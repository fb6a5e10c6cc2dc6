/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests that
 * scrape /metrics: every line must be a comment, a HELP or TYPE line, or a sample of a
 * declared family, with labels quoted and escaped as the format says. Anything else throws.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  types: Map<string, MetricType>
  help: Map<string, string>
  samples: Sample[]
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/

export function parseExposition(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a line feed')
  const types = new Map<string, MetricType>()
  const help = new Map<string, string>()
  const samples: Sample[] = []
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, index) => {
      const fail = (why: string): never => {
        throw new Error(`line ${index + 1}: ${why}: ${JSON.stringify(line)}`)
      }
      if (line === '') return
      if (line.startsWith('#')) {
        const match = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
        if (!match) return
        const [keyword, name, rest] = [match[1], match[2] ?? '', match[3] ?? '']
        if (keyword === 'HELP') help.set(name, unescapeHelp(rest))
        else {
          if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) fail('unknown type')
          if (types.has(name)) fail('a second TYPE line')
          types.set(name, rest as MetricType)
        }
        return
      }
      const name = NAME.exec(line)?.[0] ?? fail('no metric name')
      let rest = line.slice(name.length)
      const labels: Record<string, string> = {}
      if (rest.startsWith('{')) {
        rest = rest.slice(1)
        while (!rest.startsWith('}')) {
          const labelName = LABEL_NAME.exec(rest)?.[0] ?? fail('bad label name')
          rest = rest.slice(labelName.length)
          if (!rest.startsWith('="')) fail('label without ="')
          rest = rest.slice(2)
          let value = ''
          for (;;) {
            const char = rest[0] ?? fail('unterminated label value')
            rest = rest.slice(1)
            if (char === '"') break
            if (char === '\n') fail('raw line feed in a label value')
            if (char !== '\\') {
              value += char
              continue
            }
            const escaped = rest[0] ?? fail('dangling backslash')
            rest = rest.slice(1)
            if (escaped === 'n') value += '\n'
            else if (escaped === '\\' || escaped === '"') value += escaped
            else fail('unknown escape')
          }
          if (labelName in labels) fail('repeated label')
          labels[labelName] = value
          if (rest.startsWith(',')) rest = rest.slice(1)
          else if (!rest.startsWith('}')) fail('labels not separated by commas')
        }
        rest = rest.slice(1)
      }
      const fields = rest.trim().split(/\s+/)
      if (!rest.startsWith(' ') || fields.length < 1 || fields.length > 2) fail('expected a value and an optional timestamp')
      const value = parseValue(fields[0] ?? '') ?? fail('bad value')
      const family = familyOf(name, types)
      if (family === undefined) fail('a sample of no declared family')
      samples.push({ name, labels, value })
    })
  return { types, help, samples }
}

function parseValue(text: string): number | undefined {
  if (text === '+Inf') return Number.POSITIVE_INFINITY
  if (text === '-Inf') return Number.NEGATIVE_INFINITY
  if (text === 'NaN') return Number.NaN
  const value = Number(text)
  return text !== '' && !Number.isNaN(value) ? value : undefined
}

/** The family a sample belongs to: its own name, or a histogram's for `_bucket`, `_sum` and `_count`. */
function familyOf(name: string, types: Map<string, MetricType>): string | undefined {
  if (types.has(name)) return name
  const base = name.replace(/_(bucket|sum|count)$/, '')
  return base !== name && (types.get(base) === 'histogram' || types.get(base) === 'summary') ? base : undefined
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(n|\\)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : '\\'))
}

/** The one sample of `name` whose labels are exactly `labels`; 0 when there is none (a series not yet created). */
export function sampleValue(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const wanted = JSON.stringify(Object.entries(labels).sort())
  const matches = exposition.samples.filter((sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted)
  if (matches.length > 1) throw new Error(`${matches.length} samples of ${name} ${wanted}`)
  return matches[0]?.value ?? 0
}
