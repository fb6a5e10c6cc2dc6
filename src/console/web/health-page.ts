import { metricsText } from './api'
import { h, show, table } from './dom'
import { count } from './format'

interface Sample {
  name: string
  labels: Record<string, string>
  value: string
}

/** Prometheus text samples (`name{label="value",...} number`); comments skipped. */
function samples(text: string): Sample[] {
  const found: Sample[] = []
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!match || line.startsWith('#')) continue
    const labels: Record<string, string> = {}
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\(.)/g, '$1')
    found.push({ name: match[1] ?? '', labels, value: match[3] ?? '' })
  }
  return found
}

/**
 * What the gateway can tell about itself: readiness, and from /metrics (this instance, since it
 * started) the open holds and streams and the upstream calls that failed, by provider and why.
 * The gateway keeps no list of individual upstream errors; the request logs have them.
 */
export async function healthPage(main: HTMLElement): Promise<void> {
  const [metrics, ready] = await Promise.all([metricsText(), fetch('/v1/readyz').then((response) => response.status)])
  const all = samples(metrics)
  const gauge = (name: string) => all.find((sample) => sample.name === name)?.value ?? '—'
  const failures = all.filter((sample) => sample.name === 'tollgate_upstream_attempts_total' && sample.labels.outcome !== 'ok' && sample.value !== '0')
  const attempts = all.filter((sample) => sample.name === 'tollgate_upstream_attempts_total')
  const serverErrors = all.filter((sample) => sample.name === 'tollgate_requests_total' && /^5/.test(sample.labels.status ?? '') && sample.value !== '0')
  const stat = (label: string, value: string, testId: string) =>
    h('section', { class: 'card stat', 'aria-label': label }, h('h2', {}, label), h('p', { class: 'big', 'data-testid': testId }, value))
  show(
    main,
    h('h1', {}, 'Health'),
    h(
      'div',
      { class: 'stats' },
      stat('Ready', ready === 200 ? 'yes' : `no (${ready})`, 'ready'),
      stat('Holds open', count(gauge('tollgate_holds_open')), 'holds-open'),
      stat('Streams open', count(gauge('tollgate_streams_open')), 'streams-open'),
    ),
    h(
      'p',
      { class: 'muted' },
      'Counts are this instance’s, since it started (from /metrics). The gateway keeps counters, not a list of individual upstream errors: each one is in the request log line of its request.',
    ),
    table(
      'Failed upstream calls, by provider and outcome',
      ['Provider', 'Outcome', 'Calls'],
      failures.map((sample) => [sample.labels.provider ?? '—', sample.labels.outcome ?? '—', count(sample.value)]),
      [2],
    ),
    table(
      'Answers with a server error (5xx), by route',
      ['Route', 'Model', 'Status', 'Requests'],
      serverErrors.map((sample) => [sample.labels.route ?? '—', sample.labels.model ?? '—', sample.labels.status ?? '—', count(sample.value)]),
      [3],
    ),
    table(
      'Every upstream call, by provider and outcome',
      ['Provider', 'Outcome', 'Calls'],
      attempts.map((sample) => [sample.labels.provider ?? '—', sample.labels.outcome ?? '—', count(sample.value)]),
      [2],
    ),
  )
}
