import { isRecord } from '../../util/is-record'
import type { NativeBody } from '../adapter'

/**
 * What a client may not choose on a native messages route: the request options that would make
 * Anthropic bill the operator more than the catalogue price the client is charged. Each is
 * dropped rather than refused, so the request still works, at the standard price
 * (https://docs.claude.com/en/docs/about-claude/pricing). Claude on Vertex AI takes the same
 * body and header, and is cleaned the same way.
 */

/**
 * Betas that change the price of a request, by prefix (a beta's name ends in its date):
 * `context-1m-` lifts the context to a million tokens, billed at long-context rates once the
 * input passes 200k tokens; `fast-mode-` enables faster output at a multiple of the price. Every
 * other beta (prompt caching, interleaved thinking, fine-grained tool streaming, token-efficient
 * tools, the ones Claude Code sends) changes behaviour, not price, and passes.
 */
const PREMIUM_BETA_PREFIXES = ['context-1m-', 'fast-mode-']

/**
 * The `anthropic-beta` header to send upstream: the client's list less premium betas (as the
 * client wrote it when it has none), and no header when none is left.
 */
export function betaHeader(clientBetas: string | null): Record<string, string> {
  if (!clientBetas) return {}
  const betas = clientBetas.split(',').map((beta) => beta.trim())
  const kept = betas.filter((beta) => beta && !PREMIUM_BETA_PREFIXES.some((prefix) => beta.startsWith(prefix)))
  if (kept.length === betas.length) return { 'anthropic-beta': clientBetas }
  return kept.length > 0 ? { 'anthropic-beta': kept.join(',') } : {}
}

/**
 * Body options and the one value of each that keeps the catalogue price; any other value is
 * dropped, which is the same as that value or cheaper:
 * - `speed`: anything but `standard` is fast mode, priced at a multiple;
 * - `service_tier`: `auto`, the API's behaviour when the field is absent, may run on Priority
 *   Tier capacity where the operator's organisation has it; a client can only opt out of that
 *   (`standard_only`), never into it, since whether to use it is the operator's account choice;
 * - `inference_geo`: anything but `global` pins inference to a region, priced above global.
 */
const CATALOGUE_PRICE_VALUES: Record<string, string> = { speed: 'standard', service_tier: 'standard_only', inference_geo: 'global' }

/**
 * Cache lifetimes a model's prices cover: the default five minutes at `cacheWrite`, and one hour
 * when the model prices it (`cacheWrite1h`). A one-hour write costs twice the input price, above
 * what `cacheWrite` (1.25 times) bills, so without that price a longer `ttl` is removed and the
 * block cached for the default time instead.
 */
const DEFAULT_CACHE_TTL = '5m'
const ONE_HOUR_CACHE_TTL = '1h'

/**
 * A messages body without the options above and without cache lifetimes the catalogue does not
 * price: longer than the default, unless `oneHourCacheWrites` and the lifetime is one hour.
 */
export function withoutPremiumOptions(body: NativeBody, oneHourCacheWrites = false): NativeBody {
  const kept = Object.fromEntries(
    Object.entries(body).filter(([field, value]) => CATALOGUE_PRICE_VALUES[field] === undefined || value === CATALOGUE_PRICE_VALUES[field]),
  )
  return withCatalogueCacheTtls(kept, oneHourCacheWrites ? [DEFAULT_CACHE_TTL, ONE_HOUR_CACHE_TTL] : [DEFAULT_CACHE_TTL])
}

/**
 * `cache_control` may sit on the request itself, on tools, on system blocks, on message content
 * blocks and on the blocks inside them, such as a tool result's
 * (https://docs.claude.com/en/docs/build-with-claude/prompt-caching).
 */
function withCatalogueCacheTtls(body: NativeBody, priced: readonly unknown[]): NativeBody {
  const withTtl = (holder: NativeBody) => withPricedTtl(holder, priced)
  const withBlockTtl = (block: unknown) => (isRecord(block) ? withTtl(block) : block)
  const withContentTtls = (holder: unknown): unknown => {
    const cleaned = withBlockTtl(holder)
    return isRecord(cleaned) && Array.isArray(cleaned.content) ? { ...cleaned, content: cleaned.content.map(withContentTtls) } : cleaned
  }
  const cleaned = { ...withTtl(body) }
  if (Array.isArray(body.system)) cleaned.system = body.system.map(withBlockTtl)
  if (Array.isArray(body.tools)) cleaned.tools = body.tools.map(withBlockTtl)
  // A message and its content blocks, and theirs, are cleaned alike.
  if (Array.isArray(body.messages)) cleaned.messages = body.messages.map(withContentTtls)
  return cleaned
}

/** `holder` with a `cache_control` of a priced lifetime: itself when its lifetime is priced or absent, else without the `ttl`. */
function withPricedTtl(holder: NativeBody, priced: readonly unknown[]): NativeBody {
  if (!isRecord(holder.cache_control)) return holder
  const { ttl, ...cacheControl } = holder.cache_control
  return ttl === undefined || priced.includes(ttl) ? holder : { ...holder, cache_control: cacheControl }
}
