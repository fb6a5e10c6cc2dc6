import { h } from './dom'

const SVG = 'http://www.w3.org/2000/svg'

/** Colours of the series, in order; the last one is "the rest" when there are more series than colours. */
export const PALETTE = ['#1f5fbf', '#e07b24', '#2e9e5b', '#a23fbf', '#c23a3a', '#1b9aa6', '#8a6d1f', '#7b8794'] as const

function svg<Tag extends keyof SVGElementTagNameMap>(tag: Tag, attributes: Record<string, string | number>, ...children: (SVGElement | string)[]) {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  for (const child of children) element.append(child)
  return element
}

/** One series: its name and, per period (in the chart's order), its value and that value as shown. */
export interface Series {
  name: string
  /** Geometry only. */
  values: readonly number[]
  /** What a tooltip says of each value (the API's own text for an amount); the number otherwise. */
  texts?: readonly string[]
}

interface Frame {
  width: number
  height: number
  top: number
  bottom: number
  left: number
  right: number
}

/** Drawn at the screen's width, so its labels keep their size on a phone as on a laptop. */
function frame(half = false): Frame {
  const page = Math.min(1200, document.documentElement.clientWidth - 64)
  // Two charts side by side (the `.columns` grid) on a screen wide enough for two.
  const width = half && page >= 700 ? (page - 32) / 2 : page
  return { width: Math.max(300, width), height: 220, top: 18, bottom: 28, left: 48, right: 8 }
}

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power
  return 10 * power
}

/** Room on the left for the longest label of the vertical axis (11 px text, about 6.6 px a character). */
function withAxisRoom(box: Frame, max: number, unit: string): Frame {
  const longest = Math.max(...[0, 0.5, 1].map((fraction) => `${shortNumber(max * fraction)}${unit}`.length))
  return { ...box, left: Math.max(28, Math.ceil(10 + 6.6 * longest)) }
}

function shortNumber(value: number): string {
  if (value >= 1_000_000) return `${value / 1_000_000}M`
  if (value >= 1000) return `${value / 1000}k`
  return String(Number(value.toPrecision(3)))
}

/** Horizontal guides at 0, half and the top, labelled on the left; the x labels under every n-th period, the newest always. */
function axes(chart: SVGSVGElement, box: Frame, periods: readonly string[], max: number, unit: string, slot: number): void {
  for (const fraction of [0, 0.5, 1]) {
    const y = box.height - box.bottom - (box.height - box.top - box.bottom) * fraction
    chart.append(svg('line', { x1: box.left, x2: box.width - box.right, y1: y, y2: y, class: fraction === 0 ? 'axis' : 'guide' }))
    chart.append(svg('text', { x: box.left - 4, y: y + 4, 'text-anchor': 'end', class: 'tick' }, `${shortNumber(max * fraction)}${unit}`))
  }
  const every = Math.ceil(periods.length / Math.max(2, Math.floor((box.width - box.left) / 80)))
  periods.forEach((period, index) => {
    if ((periods.length - 1 - index) % every !== 0) return
    const center = Math.min(box.width - 28, Math.max(box.left + 20, box.left + slot * (index + 0.5)))
    chart.append(svg('text', { x: center, y: box.height - 8, 'text-anchor': 'middle', class: 'tick' }, periodLabel(period)))
  })
}

/** `2026-11-03` as `11-03`, an hour as `03 14h`, a month as itself. */
function periodLabel(period: string): string {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}/.test(period)) return `${period.slice(8, 10)} ${period.slice(11, 13)}h`
  if (/^\d{4}-\d{2}-\d{2}$/.test(period)) return period.slice(5)
  return period
}

function legend(series: readonly Series[]): HTMLElement {
  return h(
    'ul',
    { class: 'legend' },
    ...series.map((entry, index) => {
      const swatch = svg(
        'svg',
        { width: 10, height: 10, 'aria-hidden': 'true' },
        svg('rect', { width: 10, height: 10, rx: 2, fill: PALETTE[index % PALETTE.length] ?? '#000' }),
      )
      const item = h('li', { title: entry.name })
      item.append(swatch, ' ', entry.name)
      return item
    }),
  )
}

function figure(title: string, chart: SVGSVGElement | null, series: readonly Series[], testId: string): HTMLElement {
  const element = h('figure', { class: 'chart', 'data-testid': testId }, h('figcaption', {}, title))
  if (chart) element.append(chart)
  if (series.length > 1 || (series.length === 1 && chart)) element.append(legend(series))
  return element
}

/**
 * Bars stacked by series, one per period, oldest on the left; a period without a value is drawn
 * empty (zero), not skipped. Each period has a column the pointer can rest on, whose tooltip lists
 * the period's values as the API wrote them; the columns carry `data-period` and `data-total`.
 */
export function stackedBars(
  title: string,
  periods: readonly string[],
  series: readonly Series[],
  options: { unit?: string; testId: string; total: (index: number) => string },
): HTMLElement {
  const totals = periods.map((_, index) => series.reduce((sum, entry) => sum + (entry.values[index] ?? 0), 0))
  const max = niceMax(Math.max(0, ...totals))
  const box = withAxisRoom(frame(), max, options.unit ?? '')
  const plot = box.height - box.top - box.bottom
  const slot = (box.width - box.left - box.right) / Math.max(1, periods.length)
  const barWidth = Math.max(2, Math.min(40, slot * 0.72))
  const chart = svg('svg', { viewBox: `0 0 ${box.width} ${box.height}`, role: 'img', 'aria-label': `${title}: ${periods.length} periods` })
  axes(chart, box, periods, max, options.unit ?? '', slot)
  periods.forEach((period, index) => {
    const x = box.left + index * slot + (slot - barWidth) / 2
    const column = svg('g', { class: 'period', 'data-period': period, 'data-total': options.total(index) })
    let base = box.height - box.bottom
    series.forEach((entry, seriesIndex) => {
      const value = entry.values[index] ?? 0
      if (value <= 0) return
      const height = Math.max(1, (plot * value) / max)
      base -= height
      column.append(svg('rect', { x, y: base, width: barWidth, height, fill: PALETTE[seriesIndex % PALETTE.length] ?? '#000', 'data-series': entry.name }))
    })
    const lines = series.flatMap((entry) => ((entry.values[index] ?? 0) > 0 ? [`${entry.name}: ${entry.texts?.[index] ?? entry.values[index]}`] : []))
    column.append(
      svg(
        'rect',
        { x: box.left + index * slot, y: box.top, width: slot, height: plot, class: 'hit' },
        svg('title', {}, [`${period}: ${options.total(index)}`, ...lines].join('\n')),
      ),
    )
    chart.append(column)
  })
  return figure(title, chart, series, options.testId)
}

/**
 * Lines over the periods, oldest on the left; a period whose value is null (nothing to measure)
 * breaks the line. Each point carries its value in `data-value` and a tooltip.
 */
export function lines(
  title: string,
  periods: readonly string[],
  series: readonly { name: string; values: readonly (number | null)[] }[],
  options: { unit: string; testId: string; half?: boolean },
): HTMLElement {
  const max = niceMax(Math.max(0, ...series.flatMap((entry) => entry.values.filter((value): value is number => value !== null))))
  const box = withAxisRoom(frame(options.half), max, options.unit)
  const plot = box.height - box.top - box.bottom
  const slot = (box.width - box.left - box.right) / Math.max(1, periods.length)
  const chart = svg('svg', { viewBox: `0 0 ${box.width} ${box.height}`, role: 'img', 'aria-label': `${title}: ${periods.length} periods` })
  axes(chart, box, periods, max, options.unit, slot)
  series.forEach((entry, seriesIndex) => {
    const colour = PALETTE[seriesIndex % PALETTE.length] ?? '#000'
    let run: string[] = []
    const flush = () => {
      if (run.length > 1) chart.append(svg('polyline', { points: run.join(' '), fill: 'none', stroke: colour, 'stroke-width': 2 }))
      run = []
    }
    entry.values.forEach((value, index) => {
      if (value === null) return flush()
      const x = box.left + slot * (index + 0.5)
      const y = box.height - box.bottom - (plot * value) / max
      run.push(`${x.toFixed(1)},${y.toFixed(1)}`)
      chart.append(
        svg(
          'circle',
          { cx: x, cy: y, r: 2.5, fill: colour, class: 'point', 'data-series': entry.name, 'data-period': periods[index] ?? '', 'data-value': value },
          svg('title', {}, `${periods[index]} ${entry.name}: ${value}${options.unit}`),
        ),
      )
    })
    flush()
  })
  return figure(
    title,
    chart,
    series.map((entry) => ({ name: entry.name, values: [] })),
    options.testId,
  )
}
