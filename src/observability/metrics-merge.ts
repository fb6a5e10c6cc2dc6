/**
 * One instance's metrics from its workers' expositions (docs/operations.md#workers): a scrape
 * lands on any worker, and it must describe the whole instance. Series with the same name and
 * labels are added up (counters, histogram buckets, sums and counts, and gauges, so holds and
 * streams open are the instance's); the event-loop lag, a worst case, keeps the largest.
 */

/** Gauges that say how bad the worst worker is: adding them up would invent a lag nobody has. */
const LARGEST_WINS = new Set(['tollgate_event_loop_lag_seconds'])

interface Family {
  header: string[]
  /** Sample values by the sample's name and labels, in the order they first appeared. */
  samples: Map<string, string[]>
}

/** Merges expositions written by metric-registry.ts (the same instruments, each in the same order). */
export function mergeExpositions(texts: readonly string[]): string {
  const families = new Map<string, Family>()
  for (const text of texts) {
    let current: Family | undefined
    for (const line of text.split('\n')) {
      if (line === '') continue
      const help = /^# HELP (\S+)/.exec(line)
      if (help?.[1] !== undefined) {
        const name = help[1]
        current = families.get(name)
        if (!current) {
          current = { header: [line], samples: new Map() }
          families.set(name, current)
        } else current = { ...current, header: [] }
        continue
      }
      if (line.startsWith('#')) {
        if (current && current.header.length > 0 && current.header.length < 2) current.header.push(line)
        continue
      }
      const space = line.lastIndexOf(' ')
      if (!current || space < 0) continue
      const key = line.slice(0, space)
      const values = current.samples.get(key)
      if (values) values.push(line.slice(space + 1))
      else current.samples.set(key, [line.slice(space + 1)])
    }
  }
  const lines: string[] = []
  for (const [name, family] of families) {
    lines.push(...family.header)
    for (const [key, values] of family.samples) lines.push(`${key} ${LARGEST_WINS.has(name) ? largest(values) : exactSum(values)}`)
  }
  return `${lines.join('\n')}\n`
}

/**
 * The sum of decimal numbers as written, done in integers so credits (six decimals) add up to
 * the exact amount; anything else (an exponent, NaN) is added as floating point.
 */
export function exactSum(values: readonly string[]): string {
  if (!values.every((value) => /^-?[0-9]{1,20}(\.[0-9]{1,12})?$/.test(value))) {
    return String(values.reduce((total, value) => total + Number(value), 0))
  }
  const decimals = Math.max(...values.map((value) => value.split('.')[1]?.length ?? 0))
  const total = values.reduce((sum, value) => {
    const [whole = '0', fraction = ''] = value.replace('-', '').split('.')
    const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0')
    return sum + (value.startsWith('-') ? -units : units)
  }, 0n)
  if (decimals === 0) return total.toString()
  const negative = total < 0n
  const digits = (negative ? -total : total).toString().padStart(decimals + 1, '0')
  const fraction = digits.slice(-decimals).replace(/0+$/, '')
  const whole = digits.slice(0, -decimals)
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}

function largest(values: readonly string[]): string {
  return String(Math.max(...values.map(Number)))
}
