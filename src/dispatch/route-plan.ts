import type { ModelEntry } from '../catalog/catalog-schema'
import type { ResolvedModel } from '../catalog/resolve-model'
import type { ProviderConfig } from '../config'
import { NoRouteAvailableError } from '../errors/kinds'
import type { ProviderAdapter, UpstreamTarget } from '../providers/adapter'
import { adapterFor } from '../providers/registry'
import type { Services } from '../services'
import type { Answer, StreamPart } from '../spec/answer'
import type { Prompt } from '../spec/prompt'

/** One way to serve a call: a catalogue model through one of its routes. */
export interface Route {
  model: ModelEntry
  provider: ProviderConfig
  adapter: ProviderAdapter
  /** The provider's own id for the model. */
  upstreamModel: string
}

/**
 * Every route that could serve the request, in the order to try them: a model's routes in
 * config order; an alias's targets in order, each with its routes. `usable` keeps a route
 * (shaped as the caller needs it) when its provider is configured and its API can serve the
 * endpoint, natively or by translation.
 */
export function planRoutes<Option>(services: Services, resolved: ResolvedModel, usable: (route: Route) => Option | undefined): Option[] {
  const models =
    resolved.kind === 'model'
      ? [resolved.model]
      : resolved.kind === 'custom'
        ? [resolved.base]
        : resolved.alias.targets.flatMap((target) => services.catalog.model(target) ?? [])
  const options = models.flatMap((model) =>
    model.routes.flatMap((route): Option[] => {
      const provider = services.catalog.provider(route.provider)
      const adapter = provider?.configured ? adapterFor(provider) : undefined
      const option = provider && adapter ? usable({ model, provider, adapter, upstreamModel: route.model }) : undefined
      return option === undefined ? [] : [option]
    }),
  )
  if (options.length === 0) throw new NoRouteAvailableError('No configured upstream can serve this model on this endpoint.')
  return options
}

/** A route reached by translation: the canonical prompt out, canonical answers and parts back. */
export type TranslatedRoute = Route & {
  mode: 'translated'
  send: (target: UpstreamTarget, prompt: Prompt) => Promise<Response>
  readAnswer: (body: unknown) => Answer
  readStream: (body: ReadableStream<Uint8Array>) => AsyncIterable<StreamPart>
}

export function translatedRoute(route: Route): TranslatedRoute | undefined {
  const { sendPrompt, readAnswer, readStream } = route.adapter
  return sendPrompt && readAnswer && readStream ? { ...route, mode: 'translated', send: sendPrompt, readAnswer, readStream } : undefined
}
