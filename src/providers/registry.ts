import type { ProviderConfig } from '../config'
import type { ProviderAdapter } from './adapter'
import { anthropicAdapter } from './anthropic'
import { geminiAdapter } from './gemini'
import { openAiAdapter } from './openai'
import { vertexAdapter } from './vertex'

/** One line per upstream API. APIs without an adapter yet have no usable routes. */
const ADAPTERS: Partial<Record<ProviderConfig['api'], ProviderAdapter>> = {
  openai: openAiAdapter,
  anthropic: anthropicAdapter,
  vertex: vertexAdapter,
  gemini: geminiAdapter,
}

export function adapterFor(provider: ProviderConfig): ProviderAdapter | undefined {
  return ADAPTERS[provider.api]
}
