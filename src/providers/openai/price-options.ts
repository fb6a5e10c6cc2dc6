import type { NativeBody } from '../adapter'

/**
 * The service tiers a client may choose: `auto` and `default` both run at the standard price the
 * catalogue charges. `priority` costs more per token, while `flex` and `scale` change price or
 * capacity terms (https://platform.openai.com/docs/api-reference/chat/create#chat-create-service_tier);
 * OpenAI-compatible servers have premium tiers of their own (Groq's `performance`).
 */
const CATALOGUE_PRICE_TIERS = new Set(['auto', 'default'])

/**
 * A chat completions or Responses API body without a service tier that would bill the operator
 * differently from the catalogue price the client is charged. The tier is dropped rather than
 * refused: the request still works, on the account's default tier.
 */
export function withoutPremiumTier(body: NativeBody): NativeBody {
  const { service_tier: tier, ...rest } = body
  return tier === undefined || (typeof tier === 'string' && CATALOGUE_PRICE_TIERS.has(tier)) ? body : rest
}

/**
 * Responses API tools OpenAI runs itself and bills per use on top of tokens: web search per
 * call, file search per call, a code interpreter per container session, image generation per
 * image (https://platform.openai.com/docs/pricing#built-in-tools). The catalogue has no price
 * for them, so they are not forwarded, like a premium tier; a tool_choice that names one goes
 * with it. Function and custom tools, which the client runs, pass.
 */
const PROVIDER_BILLED_TOOL_PREFIXES = ['web_search', 'file_search', 'code_interpreter', 'image_generation']

const isProviderBilled = (tool: unknown) => {
  const type = typeof tool === 'object' && tool !== null ? (tool as { type?: unknown }).type : undefined
  return typeof type === 'string' && PROVIDER_BILLED_TOOL_PREFIXES.some((prefix) => type.startsWith(prefix))
}

/** A Responses API body with neither a premium tier nor tools OpenAI bills per use. */
export function withoutPremiumResponsesOptions(body: NativeBody): NativeBody {
  const cleaned = withoutPremiumTier(body)
  if (!Array.isArray(cleaned.tools) || !cleaned.tools.some(isProviderBilled)) return cleaned
  const { tool_choice: choice, tools: requested, ...rest } = cleaned
  const tools = (requested as unknown[]).filter((tool) => !isProviderBilled(tool))
  return { ...rest, ...(tools.length > 0 ? { tools } : {}), ...(choice === undefined || isProviderBilled(choice) ? {} : { tool_choice: choice }) }
}
