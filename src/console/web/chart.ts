import type { Credits } from './api'
import { credits } from './format'

const SVG = 'http://www.w3.org/2000/svg'

function svg<Tag extends keyof SVGElementTagNameMap>(tag: Tag, attributes: Record<string, string | number>, ...children: (SVGElement | string)[]) {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  for (const child of children) element.append(child)
  return element
}

export interface Bar {
  label: string
  value: Credits
}

/**
 * A bar chart in plain SVG, oldest bar on the left. Bar heights are geometry only: each bar's
 * amount, shown in its tooltip and in the table beside the chart, is the API's own text.
 */
export function barChart(title: string, bars: readonly Bar[]): HTMLElement {
  const figure = document.createElement('figure')
  figure.className = 'chart'
  const caption = document.createElement('figcaption')
  caption.textContent = title
  if (bars.length === 0) {
    const empty = document.createElement('p')
    empty.className = 'empty'
    empty.textContent = 'No spend in this period.'
    figure.append(caption, empty)
    return figure
  }
  // Drawn at the screen's width, so its labels keep their size on a phone as on a laptop.
  const width = Math.max(300, Math.min(1200, document.documentElement.clientWidth - 64))
  const height = 200
  const top = 16
  const bottom = 28
  const left = 8
  const max = Math.max(...bars.map((bar) => Number(bar.value)), 0) || 1
  const slot = (width - left * 2) / bars.length
  const barWidth = Math.max(2, Math.min(48, slot * 0.7))
  const labelEvery = Math.ceil(bars.length / Math.max(2, Math.floor(width / 90)))
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${title}: ${bars.length} bars` })
  chart.append(svg('line', { x1: left, x2: width - left, y1: height - bottom, y2: height - bottom, class: 'axis' }))
  bars.forEach((bar, index) => {
    const barHeight = Math.max(Number(bar.value) > 0 ? 1 : 0, ((height - top - bottom) * Number(bar.value)) / max)
    const x = left + index * slot + (slot - barWidth) / 2
    const rect = svg('rect', {
      x,
      y: height - bottom - barHeight,
      width: barWidth,
      height: barHeight,
      class: 'bar',
      'data-label': bar.label,
      'data-value': credits(bar.value),
    })
    rect.append(svg('title', {}, `${bar.label}: ${credits(bar.value)} credits`))
    chart.append(rect)
    // Labels counted from the newest bar, which always has one; kept inside the drawing.
    if ((bars.length - 1 - index) % labelEvery === 0) {
      const center = Math.min(width - 24, Math.max(24, x + barWidth / 2))
      chart.append(svg('text', { x: center, y: height - 8, 'text-anchor': 'middle', class: 'tick' }, bar.label.slice(5) || bar.label))
    }
  })
  chart.append(svg('text', { x: left, y: 12, class: 'tick' }, `max ${credits(bars.find((bar) => Number(bar.value) === max)?.value ?? '0')}`))
  figure.append(caption, chart)
  return figure
}
