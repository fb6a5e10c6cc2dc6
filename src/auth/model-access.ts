/**
 * A key's `allowed_models`: exact ids or `vendor/*` patterns. No list means every model.
 */
export const ALLOWED_MODEL_PATTERN = '^[a-z0-9][a-z0-9._-]*/(\\*|[^\\s*]+)$'

export function isModelAllowed(allowed: readonly string[] | null | undefined, modelId: string): boolean {
  if (!allowed) return true
  return allowed.some((pattern) => (pattern.endsWith('/*') ? modelId.startsWith(pattern.slice(0, -1)) : pattern === modelId))
}
