import type { Pricing } from '../billing/price-schema'
import type { CatalogFile, ModelEntry } from './catalog-schema'

/**
 * The catalogue used when no config file is given: current models of the major providers at
 * their public list prices (credits = US dollars; token prices per million tokens). A
 * provider's models are listed only once its credential is in the environment.
 */

const openaiChat = (model: string, pricing: Pricing, contextWindow: number, maxOutputTokens: number, tags?: string[]): ModelEntry => ({
  id: `openai/${model}`,
  type: 'chat',
  routes: [{ provider: 'openai', model }],
  pricing,
  contextWindow,
  maxOutputTokens,
  ...(tags ? { tags } : {}),
})

const anthropicChat = (model: string, pricing: Pricing, maxOutputTokens: number, tags?: string[]): ModelEntry => ({
  id: `anthropic/${model}`,
  type: 'chat',
  routes: [{ provider: 'anthropic', model }],
  pricing: { ...pricing, webSearch: 0.01 },
  contextWindow: 200_000,
  maxOutputTokens,
  ...(tags ? { tags } : {}),
})

const geminiChat = (model: string, pricing: Pricing, tags?: string[]): ModelEntry => ({
  id: `google/${model}`,
  type: 'chat',
  routes: [{ provider: 'gemini', model }],
  pricing,
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
  ...(tags ? { tags } : {}),
})

const compatibleChat = (provider: string, model: string, pricing: Pricing, contextWindow: number, maxOutputTokens: number, tags?: string[]): ModelEntry => ({
  id: `${provider}/${model}`,
  type: 'chat',
  routes: [{ provider, model }],
  pricing,
  contextWindow,
  maxOutputTokens,
  ...(tags ? { tags } : {}),
})

const single = (id: string, type: ModelEntry['type'], provider: string, model: string, pricing: Pricing, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  id,
  type,
  routes: [{ provider, model }],
  pricing,
  ...extra,
})

const coding = ['coding']

export function builtinCatalog(env: Record<string, string | undefined>): CatalogFile {
  const catalog: CatalogFile = {
    providers: {
      openai: { api: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', responsesApi: true },
      anthropic: { api: 'anthropic', baseUrl: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY' },
      gemini: { api: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com', apiKeyEnv: 'GEMINI_API_KEY' },
      groq: { api: 'openai', baseUrl: 'https://api.groq.com/openai/v1', apiKeyEnv: 'GROQ_API_KEY' },
      mistral: { api: 'openai', baseUrl: 'https://api.mistral.ai/v1', apiKeyEnv: 'MISTRAL_API_KEY' },
      deepseek: { api: 'openai', baseUrl: 'https://api.deepseek.com/v1', apiKeyEnv: 'DEEPSEEK_API_KEY' },
      openrouter: { api: 'openai', baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY' },
    },
    models: [
      openaiChat('gpt-5', { input: 1.25, output: 10, cacheRead: 0.125 }, 400_000, 128_000, coding),
      openaiChat('gpt-5-mini', { input: 0.25, output: 2, cacheRead: 0.025 }, 400_000, 128_000),
      openaiChat('gpt-5-nano', { input: 0.05, output: 0.4, cacheRead: 0.005 }, 400_000, 128_000),
      openaiChat('gpt-5-codex', { input: 1.25, output: 10, cacheRead: 0.125 }, 400_000, 128_000, coding),
      openaiChat('gpt-4.1', { input: 2, output: 8, cacheRead: 0.5 }, 1_047_576, 32_768),
      openaiChat('gpt-4.1-mini', { input: 0.4, output: 1.6, cacheRead: 0.1 }, 1_047_576, 32_768),
      openaiChat('gpt-4o', { input: 2.5, output: 10, cacheRead: 1.25 }, 128_000, 16_384),
      openaiChat('gpt-4o-mini', { input: 0.15, output: 0.6, cacheRead: 0.075 }, 128_000, 16_384),
      openaiChat('o3', { input: 2, output: 8, cacheRead: 0.5 }, 200_000, 100_000),
      openaiChat('o4-mini', { input: 1.1, output: 4.4, cacheRead: 0.275 }, 200_000, 100_000),
      single('openai/text-embedding-3-small', 'embedding', 'openai', 'text-embedding-3-small', { input: 0.02 }, { contextWindow: 8191 }),
      single('openai/text-embedding-3-large', 'embedding', 'openai', 'text-embedding-3-large', { input: 0.13 }, { contextWindow: 8191 }),
      single('openai/gpt-image-1', 'image', 'openai', 'gpt-image-1', { image: 0.042 }),
      single('openai/dall-e-3', 'image', 'openai', 'dall-e-3', { image: 0.04 }),
      single('openai/tts-1', 'speech', 'openai', 'tts-1', { inputChars: 15 }),
      single('openai/tts-1-hd', 'speech', 'openai', 'tts-1-hd', { inputChars: 30 }),
      single('openai/gpt-4o-mini-tts', 'speech', 'openai', 'gpt-4o-mini-tts', { inputChars: 15 }),
      single('openai/whisper-1', 'transcription', 'openai', 'whisper-1', { audioMinute: 0.006 }),
      single('openai/gpt-4o-transcribe', 'transcription', 'openai', 'gpt-4o-transcribe', { output: 10, audioMinute: 0.006 }),
      single('openai/gpt-4o-mini-transcribe', 'transcription', 'openai', 'gpt-4o-mini-transcribe', { output: 5, audioMinute: 0.003 }),
      single('openai/sora-2', 'video', 'openai', 'sora-2', { videoSecond: 0.1 }, { videoFamily: 'B' }),
      single('openai/sora-2-pro', 'video', 'openai', 'sora-2-pro', { videoSecond: 0.3 }, { videoFamily: 'B' }),

      anthropicChat('claude-opus-4-5', { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }, 64_000, coding),
      anthropicChat('claude-sonnet-4-5', { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, 64_000, coding),
      anthropicChat('claude-haiku-4-5', { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 }, 64_000, coding),
      anthropicChat('claude-opus-4-1', { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 }, 32_000),
      anthropicChat('claude-sonnet-4', { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, 64_000),

      geminiChat('gemini-2.5-pro', { input: 1.25, output: 10, cacheRead: 0.125 }, coding),
      geminiChat('gemini-2.5-flash', { input: 0.3, output: 2.5, cacheRead: 0.03 }),
      geminiChat('gemini-2.5-flash-lite', { input: 0.1, output: 0.4, cacheRead: 0.01 }),
      single('google/gemini-embedding-001', 'embedding', 'gemini', 'gemini-embedding-001', { input: 0.15 }, { contextWindow: 2048 }),

      compatibleChat('groq', 'llama-3.3-70b-versatile', { input: 0.59, output: 0.79 }, 131_072, 32_768),
      compatibleChat('groq', 'llama-3.1-8b-instant', { input: 0.05, output: 0.08 }, 131_072, 131_072),
      compatibleChat('groq', 'openai/gpt-oss-120b', { input: 0.15, output: 0.75 }, 131_072, 65_536),
      single('groq/whisper-large-v3', 'transcription', 'groq', 'whisper-large-v3', { audioMinute: 0.00185 }),
      // Mistral counts the prompt and max_tokens together against the context, and the limit is
      // sent upstream when the client names none: an output limit of the whole context would
      // refuse every call, so these leave room for the prompt.
      compatibleChat('mistral', 'mistral-large-latest', { input: 2, output: 6 }, 131_072, 32_768),
      compatibleChat('mistral', 'mistral-medium-latest', { input: 0.4, output: 2 }, 131_072, 32_768),
      compatibleChat('mistral', 'mistral-small-latest', { input: 0.1, output: 0.3 }, 131_072, 32_768),
      compatibleChat('mistral', 'codestral-latest', { input: 0.3, output: 0.9 }, 256_000, 32_768, coding),
      single('mistral/mistral-embed', 'embedding', 'mistral', 'mistral-embed', { input: 0.1 }, { contextWindow: 8192 }),
      compatibleChat('deepseek', 'deepseek-chat', { input: 0.28, output: 0.42, cacheRead: 0.028 }, 128_000, 8_192, coding),
      compatibleChat('deepseek', 'deepseek-reasoner', { input: 0.28, output: 0.42, cacheRead: 0.028 }, 128_000, 64_000),
      compatibleChat('openrouter', 'anthropic/claude-sonnet-4.5', { input: 3, output: 15 }, 200_000, 64_000),
      compatibleChat('openrouter', 'openai/gpt-5', { input: 1.25, output: 10 }, 400_000, 128_000),
    ],
    aliases: [{ id: 'tollgate/smart', strategy: 'fallback', targets: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'google/gemini-2.5-pro'] }],
  }

  // Vertex AI needs a project; without one there is nothing to route to.
  if (env.VERTEX_PROJECT) {
    const location = env.VERTEX_LOCATION ?? 'us-central1'
    catalog.providers.vertex = {
      api: 'vertex',
      baseUrl: `https://${location}-aiplatform.googleapis.com`,
      project: env.VERTEX_PROJECT,
      location,
      accessTokenEnv: 'VERTEX_ACCESS_TOKEN',
      ...(env.GOOGLE_APPLICATION_CREDENTIALS ? { serviceAccountKeyFile: env.GOOGLE_APPLICATION_CREDENTIALS } : {}),
    }
    catalog.models.push(
      single('google/veo-3.1-generate', 'video', 'vertex', 'veo-3.1-generate-001', { videoSecond: 0.4 }, { videoFamily: 'A' }),
      single('google/veo-3.1-fast-generate', 'video', 'vertex', 'veo-3.1-fast-generate-001', { videoSecond: 0.15 }, { videoFamily: 'A' }),
      single('google/veo-3.1-lite-generate', 'video', 'vertex', 'veo-3.1-lite-generate-001', { videoSecond: 0.05 }, { videoFamily: 'A' }),
    )
  }

  // A local Ollama has no credential: its address is what turns it on.
  if (env.OLLAMA_BASE_URL) {
    catalog.providers.ollama = { api: 'openai', baseUrl: env.OLLAMA_BASE_URL }
    catalog.models.push(
      compatibleChat('ollama', 'llama3.2', { input: 0, output: 0 }, 131_072, 8_192),
      compatibleChat('ollama', 'qwen2.5-coder', { input: 0, output: 0 }, 32_768, 8_192, coding),
    )
  }
  return catalog
}
