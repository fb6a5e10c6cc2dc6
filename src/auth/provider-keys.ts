import { InvalidApiKeyError } from '../errors/kinds'

/**
 * The shapes of the providers' own credentials, so that one pasted where a Tollgate credential
 * belongs is told what it looks like and what is expected (docs/api.md#credentials), instead
 * of being read as a malformed user token. Only the shape is named: the credential itself is
 * never echoed.
 */
const PROVIDER_KEY_SHAPES: readonly { pattern: RegExp; looksLike: string }[] = [
  { pattern: /^sk-ant-[A-Za-z0-9]+-/, looksLike: 'an Anthropic API key (sk-ant-…)' },
  { pattern: /^sk-or-v\d+-/, looksLike: 'an OpenRouter API key (sk-or-…)' },
  { pattern: /^sk-(proj|svcacct|admin|None)-/, looksLike: 'an OpenAI API key (sk-proj-…)' },
  { pattern: /^sk-[A-Za-z0-9_-]{20,}$/, looksLike: 'a provider API key (sk-…, as OpenAI and DeepSeek issue)' },
  { pattern: /^AIza[A-Za-z0-9_-]{30,}$/, looksLike: 'a Google API key (AIza…)' },
  { pattern: /^gsk_[A-Za-z0-9]{20,}$/, looksLike: 'a Groq API key (gsk_…)' },
  { pattern: /^xai-[A-Za-z0-9]{20,}$/, looksLike: 'an xAI API key (xai-…)' },
  { pattern: /^hf_[A-Za-z0-9]{20,}$/, looksLike: 'a Hugging Face token (hf_…)' },
]

/** What a provider credential presented to the gateway looks like, or undefined when it has none of their shapes. */
export function providerKeyShape(credential: string): string | undefined {
  return PROVIDER_KEY_SHAPES.find(({ pattern }) => pattern.test(credential))?.looksLike
}

/** The refusal of a provider's credential sent as a Tollgate credential, when it has one of their shapes. */
export function providerKeyRefusal(credential: string): InvalidApiKeyError | undefined {
  const shape = providerKeyShape(credential)
  if (!shape) return undefined
  return new InvalidApiKeyError(
    `This credential looks like ${shape}, not a Tollgate credential. Send the Tollgate API key you were issued ` +
      "(tollgate_sk_prod_… or tollgate_sk_dev_…) or a user token; provider keys belong in the gateway's configuration, not in clients.",
  )
}
