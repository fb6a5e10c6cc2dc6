import { get } from './api'
import { h, show, table } from './dom'
import { count, time } from './format'

interface RouteState {
  provider: string
  upstream_model: string
  configured: boolean
  cooldown_seconds: number | null
  failures: number
  cooling_until: string | null
}
interface ModelRecord {
  id: string
  type: string
  aliases: string[]
  context_window: number | null
  max_output_tokens: number | null
  pricing: Record<string, string | number>
  routes: RouteState[]
}
interface ModelsAnswer {
  data: ModelRecord[]
  aliases: { id: string; strategy: string; targets: string[] }[]
}

const UNITS: Record<string, string> = {
  input: 'input / M tokens',
  output: 'output / M tokens',
  cacheRead: 'cache read / M tokens',
  cacheWrite: 'cache write / M tokens',
  cacheWrite1h: 'cache write 1 h / M tokens',
  webSearch: 'web search / call',
  image: 'image',
  videoSecond: 'video / second',
  inputChars: 'input / M characters',
  audioMinute: 'audio / minute',
}

/** A route's state in the gateway process that answered: ready, failing, cooling down, or not configured. */
function routeState(route: RouteState): HTMLElement {
  if (!route.configured) return h('span', { class: 'status status-failed' }, 'no credential')
  if (route.cooling_until)
    return h('span', { class: 'status status-failed', title: `cooling until ${route.cooling_until}` }, `cooling until ${time(route.cooling_until)}`)
  if (route.failures > 0) return h('span', { class: 'status status-pending' }, `${route.failures} failed in a row`)
  return h('span', { class: 'status status-delivered' }, 'ready')
}

/** The catalogue as served: aliases, routes in the order they are tried with their cooldown state, limits and prices. */
export async function modelsPage(main: HTMLElement): Promise<void> {
  const models = await get<ModelsAnswer>('/admin/v1/models')
  show(
    main,
    h('h1', {}, 'Models'),
    h(
      'p',
      { class: 'muted intro' },
      'Prices in credits, as the catalogue sets them. Routes are tried in order; a route that failed 3 times in a row is skipped while it cools down (the state of the gateway process that answered).',
    ),
    table(
      `${models.data.length} models`,
      ['Model', 'Aliases', 'Routes, in order', 'Context', 'Max output', 'Prices'],
      models.data.map((model) => [
        h('span', { class: 'stack' }, h('code', {}, model.id), h('small', {}, model.type)),
        model.aliases.length ? h('span', { class: 'stack' }, ...model.aliases.map((alias) => h('code', {}, alias))) : '—',
        h(
          'ul',
          { class: 'routes' },
          ...model.routes.map((route) =>
            h(
              'li',
              { 'data-testid': `route-${model.id}-${route.provider}` },
              h('strong', {}, route.provider),
              ' · ',
              h('code', {}, route.upstream_model),
              ' ',
              routeState(route),
            ),
          ),
        ),
        model.context_window === null ? '—' : count(model.context_window),
        model.max_output_tokens === null ? '—' : count(model.max_output_tokens),
        h(
          'ul',
          { class: 'prices' },
          ...Object.entries(model.pricing).map(([name, price]) => h('li', {}, h('span', {}, UNITS[name] ?? name), ' ', h('strong', {}, String(price)))),
        ),
      ]),
      [3, 4],
    ),
    table(
      'Aliases',
      ['Alias', 'Strategy', 'Targets, in order'],
      models.aliases.map((alias) => [h('code', {}, alias.id), alias.strategy, alias.targets.join(' → ')]),
    ),
  )
}
