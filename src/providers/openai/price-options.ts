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
export function withoutPremiumTier(body: Record<string, unknown>): Record<string, unknown> {
  const { service_tier: tier, ...rest } = body
  return tier === undefined || (typeof tier === 'string' && CATALOGUE_PRICE_TIERS.has(tier)) ? body : rest
}
