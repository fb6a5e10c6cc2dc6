/**
 * A small Prometheus registry: counters, gauges and histograms with fixed buckets, written in
 * the text exposition format (version 0.0.4). Hand-written rather than a client library: the
 * gateway needs these three instruments and nothing else, and the format is a page of rules
 * (docs/operations.md#metrics). Label values are escaped here; which values are allowed (never an
 * account, key or user id) is the instrumenting code's business.
 */

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

type LabelValues<Label extends string> = Readonly<Record<Label, string>>

interface Instrument {
  readonly name: string
  render(): string
}

/** Series of one instrument, keyed by their label values in the instrument's label order. */
class Series<Label extends string, Value> {
  private readonly byKey = new Map<string, { labels: string[]; value: Value }>()

  constructor(
    private readonly labelNames: readonly Label[],
    private readonly initial: () => Value,
  ) {
    // An instrument without labels has its one series from the start: a gauge reads 0, not absent.
    if (labelNames.length === 0) this.byKey.set('', { labels: [], value: initial() })
  }

  of(labels: LabelValues<Label>): Value {
    const values = this.labelNames.map((name) => labels[name])
    const key = values.join('\u0000')
    let entry = this.byKey.get(key)
    if (!entry) {
      entry = { labels: values, value: this.initial() }
      this.byKey.set(key, entry)
    }
    return entry.value
  }

  /** Each series with its rendered label pairs (without braces), in the order they first appeared. */
  *entries(): Generator<{ pairs: string[]; value: Value }> {
    for (const { labels, value } of this.byKey.values()) {
      yield { pairs: labels.map((label, index) => `${this.labelNames[index]}="${escapeLabelValue(label)}"`), value }
    }
  }
}

export class Counter<Label extends string = never> implements Instrument {
  private readonly series: Series<Label, { total: number }>

  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly Label[],
    /**
     * Values are counted in units of 1/scale and shown divided by it: credits are counted in
     * whole micro-credits, so their sum stays exact however many are added.
     */
    private readonly scale = 1,
  ) {
    this.series = new Series(labelNames, () => ({ total: 0 }))
  }

  /** Adds `amount` (at least 0; counters never go down). */
  inc(labels: LabelValues<Label>, amount = 1): void {
    if (!(amount >= 0)) return
    this.series.of(labels).total += this.scale === 1 ? amount : Math.round(amount * this.scale)
  }

  render(): string {
    const lines = header(this.name, this.help, 'counter')
    for (const { pairs, value } of this.series.entries()) lines.push(sample(this.name, pairs, value.total / this.scale))
    return lines.join('\n')
  }
}

export class Gauge<Label extends string = never> implements Instrument {
  private readonly series: Series<Label, { value: number }>

  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly Label[],
  ) {
    this.series = new Series(labelNames, () => ({ value: 0 }))
  }

  set(labels: LabelValues<Label>, value: number): void {
    this.series.of(labels).value = value
  }

  add(labels: LabelValues<Label>, amount: number): void {
    this.series.of(labels).value += amount
  }

  render(): string {
    const lines = header(this.name, this.help, 'gauge')
    for (const { pairs, value } of this.series.entries()) lines.push(sample(this.name, pairs, value.value))
    return lines.join('\n')
  }
}

export class Histogram<Label extends string = never> implements Instrument {
  private readonly series: Series<Label, { counts: number[]; sum: number; count: number }>
  private readonly bounds: readonly number[]

  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly Label[],
    /** Upper bounds, ascending; `+Inf` is added. */
    bounds: readonly number[],
  ) {
    this.bounds = [...bounds].sort((left, right) => left - right)
    this.series = new Series(labelNames, () => ({ counts: this.bounds.map(() => 0), sum: 0, count: 0 }))
  }

  observe(labels: LabelValues<Label>, value: number): void {
    if (Number.isNaN(value)) return
    const series = this.series.of(labels)
    // Counts per bucket are kept cumulative, as they are written.
    this.bounds.forEach((bound, index) => {
      if (value <= bound) series.counts[index] = (series.counts[index] ?? 0) + 1
    })
    series.sum += value
    series.count += 1
  }

  render(): string {
    const lines = header(this.name, this.help, 'histogram')
    for (const { pairs, value } of this.series.entries()) {
      this.bounds.forEach((bound, index) => lines.push(sample(`${this.name}_bucket`, [...pairs, `le="${formatNumber(bound)}"`], value.counts[index] ?? 0)))
      lines.push(sample(`${this.name}_bucket`, [...pairs, 'le="+Inf"'], value.count))
      lines.push(sample(`${this.name}_sum`, pairs, value.sum))
      lines.push(sample(`${this.name}_count`, pairs, value.count))
    }
    return lines.join('\n')
  }
}

export class MetricRegistry {
  private readonly instruments = new Map<string, Instrument>()

  counter<Label extends string = never>(name: string, help: string, labelNames: readonly Label[] = [], scale = 1): Counter<Label> {
    return this.register(new Counter(name, help, labelNames, scale))
  }

  gauge<Label extends string = never>(name: string, help: string, labelNames: readonly Label[] = []): Gauge<Label> {
    return this.register(new Gauge(name, help, labelNames))
  }

  histogram<Label extends string = never>(name: string, help: string, labelNames: readonly Label[], bounds: readonly number[]): Histogram<Label> {
    return this.register(new Histogram(name, help, labelNames, bounds))
  }

  /** Every instrument, in the order they were registered, ending with a newline as the format asks. */
  render(): string {
    return `${[...this.instruments.values()].map((instrument) => instrument.render()).join('\n')}\n`
  }

  private register<T extends Instrument>(instrument: T): T {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(instrument.name)) throw new Error(`invalid metric name ${instrument.name}`)
    if (this.instruments.has(instrument.name)) throw new Error(`metric ${instrument.name} registered twice`)
    this.instruments.set(instrument.name, instrument)
    return instrument
  }
}

function header(name: string, help: string, type: 'counter' | 'gauge' | 'histogram'): string[] {
  return [`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`]
}

function sample(name: string, pairs: string[], value: number): string {
  return `${name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${formatNumber(value)}`
}

/** The format's escapes inside a quoted label value: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}
