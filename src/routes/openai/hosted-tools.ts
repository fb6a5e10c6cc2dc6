/**
 * Responses API tools the provider runs itself and bills per use on top of tokens (web search
 * per call, file search per call, a code interpreter per session, image generation per image).
 * The catalogue has no price for them, so a native route, which would run them at the
 * operator's expense, must not receive them; translated routes leave hosted tools out anyway.
 */
const PROVIDER_BILLED_TOOL_PREFIXES = ['web_search', 'file_search', 'code_interpreter', 'image_generation']

/** The first tool of the request the provider would bill per use, with its position, if any. */
export function providerBilledTool(tools: unknown): { index: number; type: string } | undefined {
  if (!Array.isArray(tools)) return undefined
  for (const [index, tool] of tools.entries()) {
    const type = typeof tool === 'object' && tool !== null ? (tool as { type?: unknown }).type : undefined
    if (typeof type === 'string' && PROVIDER_BILLED_TOOL_PREFIXES.some((prefix) => type.startsWith(prefix))) return { index, type }
  }
  return undefined
}
