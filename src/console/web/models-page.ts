import { get } from './api'
import { h, show, table } from './dom'

interface ModelPrice {
  id: string
  type: string
  providers: string[]
  pricing: Record<string, string | number>
}

const UNITS: Record<string, string> = {
  input: 'input / M tokens',
  output: 'output / M tokens',
  cacheRead: 'cache read / M tokens',
  cacheWrite: 'cache write / M tokens',
  webSearch: 'web search / call',
  image: 'image',
  videoSecond: 'video / second',
  inputChars: 'input / M characters',
  audioMinute: 'audio / minute',
}

/** The catalogue the gateway serves and its prices in credits, as configured. */
export async function modelsPage(main: HTMLElement): Promise<void> {
  const models = await get<{ data: ModelPrice[] }>('/console/models')
  show(
    main,
    h('h1', {}, 'Models and prices'),
    h('p', { class: 'muted' }, 'Prices in credits, as the catalogue sets them; a model is listed when one of its providers has a credential.'),
    table(
      `${models.data.length} models`,
      ['Model', 'Type', 'Providers', 'Prices'],
      models.data.map((model) => [
        h('code', {}, model.id),
        model.type,
        model.providers.join(', '),
        h(
          'ul',
          { class: 'prices' },
          ...Object.entries(model.pricing).map(([name, price]) => h('li', {}, h('span', {}, UNITS[name] ?? name), ' ', h('strong', {}, String(price)))),
        ),
      ]),
    ),
  )
}
