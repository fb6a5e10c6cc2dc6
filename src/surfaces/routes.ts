import type { AnswerShape, PricedCall, Route, SurfacePlan, TranslatedEncoding, VideoRoute } from '../dispatch/surface'
import type { MediaCapability, TranslateCapability } from '../providers/adapter'
import type { CatalogueModel } from './typed-model'

/**
 * How a surface reaches a route, shaped from what the route's API can do: each surface's plan
 * names the shape it uses (`usable`), and the dispatcher keeps the routes that have it.
 */

/** A route whose API speaks the surface's format: the body passes through. */
export type NativeRoute<Capability> = Route & { mode: 'native'; native: Capability }

/** A route reached by translation: the canonical prompt out, canonical answers and parts back. */
export type TranslatedRoute = Route & { mode: 'translated'; translate: TranslateCapability }

export type ConversationRoute<Capability> = NativeRoute<Capability> | TranslatedRoute

/** The route natively where its API has the surface's capability, else by translation, else unusable. */
export function conversationRoute<Capability>(route: Route, native: Capability | undefined): ConversationRoute<Capability> | undefined {
  if (native) return { ...route, mode: 'native', native }
  return translatedRoute(route)
}

export function translatedRoute(route: Route): TranslatedRoute | undefined {
  const { translate } = route.adapter
  return translate ? { ...route, mode: 'translated', translate } : undefined
}

/** A translated route's answers: its translator reads them, the surface's encoders write them. */
export function translatedEncoding(
  route: TranslatedRoute,
  shape: AnswerShape,
  encoders: Pick<TranslatedEncoding, 'encodeAnswer' | 'encodeStream'>,
): TranslatedEncoding {
  return { ...shape, mode: 'translated', translate: route.translate, ...encoders }
}

/** A route whose API has OpenAI's media endpoints: the client's body goes there as it is. */
export type MediaRoute = Route & { media: MediaCapability }

export function mediaRoute(route: Route): MediaRoute | undefined {
  const { media } = route.adapter
  return media ? { ...route, media } : undefined
}

/** The plan of a media surface (images, speech, transcriptions): the model's media routes, priced by what came back. */
export function mediaPlan(resolved: CatalogueModel, call: Pick<PricedCall<MediaRoute>, 'holdAmount' | 'send' | 'price'>): SurfacePlan<MediaRoute> {
  return { model: resolved, usable: mediaRoute, call: (routes) => ({ kind: 'priced', modelId: resolved.model.id, routes, ...call }) }
}

/** The route when its API has the video capability, else unusable. */
export function videoRoute(route: Route): VideoRoute | undefined {
  const { video } = route.adapter
  return video ? { ...route, video } : undefined
}
