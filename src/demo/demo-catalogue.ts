import type { CatalogFile } from '../catalog/catalog-schema'

/** The provider name the demo gives its echo server: it says what it is. */
export const DEMO_PROVIDER = 'demo-echo'

/** The chat completions and responses model of the demo. */
export const DEMO_MODEL = 'demo/echo'

/**
 * The same echo for /v1/messages, which serves the `anthropic/…` family only; Anthropic SDKs
 * may name it bare (`demo-echo`), as Claude Code names its models.
 */
export const DEMO_MESSAGES_MODEL = 'anthropic/demo-echo'

/**
 * Made-up prices, high enough that a one-line call costs a visible fraction of a credit (about
 * a hundredth). The output limit keeps each call's hold at two credits or less.
 */
const DEMO_PRICING = { input: 1000, output: 2000 }
const DEMO_MAX_OUTPUT_TOKENS = 1000

/**
 * The demo's whole catalogue: one provider, the echo server, and its two model ids. It goes
 * through the same config file checks as an operator's (docs/operations.md#demo). The provider
 * has no Responses API, so /v1/responses reaches it translated through chat completions.
 */
export function demoCatalogue(echoBaseUrl: string): CatalogFile {
  const echoModel = (id: string) => ({
    id,
    type: 'chat' as const,
    routes: [{ provider: DEMO_PROVIDER, model: 'echo' }],
    pricing: DEMO_PRICING,
    contextWindow: 8192,
    maxOutputTokens: DEMO_MAX_OUTPUT_TOKENS,
    tags: ['demo', 'not-a-model'],
  })
  return {
    providers: { [DEMO_PROVIDER]: { api: 'openai', baseUrl: echoBaseUrl, responsesApi: false } },
    models: [echoModel(DEMO_MODEL), echoModel(DEMO_MESSAGES_MODEL)],
  }
}
