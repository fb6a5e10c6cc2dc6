import type { NativeBody } from '../adapter'
import type { ProviderConfig } from '../provider-config'

/** The chat completions fields that bound a completion's length. */
export type ChatOutputLimitField = 'max_completion_tokens' | 'max_tokens'

/** Hosts of OpenAI's own API (and Azure OpenAI's): they read the newer field. */
const OPENAI_HOSTS = ['api.openai.com']
const OPENAI_HOST_SUFFIXES = ['.openai.azure.com']

/**
 * The field a chat completions server reads as the output limit. OpenAI's own API reads
 * `max_completion_tokens` and refuses `max_tokens` on its reasoning models (o-series, GPT-5);
 * compatible servers (Groq, Mistral, DeepSeek, OpenRouter, Ollama, vLLM) read `max_tokens`, and
 * some refuse the other (Mistral answers 422). docs/upstreams.md#openai-chat-completions
 */
export function chatOutputLimitField(provider: Pick<ProviderConfig, 'baseUrl'>): ChatOutputLimitField {
  let host: string
  try {
    host = new URL(provider.baseUrl).hostname
  } catch {
    return 'max_tokens'
  }
  return OPENAI_HOSTS.includes(host) || OPENAI_HOST_SUFFIXES.some((suffix) => host.endsWith(suffix)) ? 'max_completion_tokens' : 'max_tokens'
}

/**
 * A client's chat body with an output limit for `provider`: the body as it is when it names one
 * (either field), else `limit` in the field the server reads, so the upstream stops where the hold
 * was sized rather than at a default of its own.
 */
export function withChatOutputLimit(body: NativeBody, limit: number | undefined, provider: Pick<ProviderConfig, 'baseUrl'>): NativeBody {
  if (limit === undefined || body.max_completion_tokens !== undefined || body.max_tokens !== undefined) return body
  return { ...body, [chatOutputLimitField(provider)]: limit }
}
