import { ruleFor } from '../auth/endpoint-rules'

/**
 * Whether requests to this endpoint are recorded (docs/operations.md#request-activity): the
 * admin API's, and every API endpoint that bills, which is every one held to a key scope (by
 * the rule or by its handler) but for the free ones (wallet, usage, pricing, count_tokens). Health checks, the model list and
 * the console are not: they would drown the rest.
 */
export function isRecordedEndpoint(method: string, pathTemplate: string | undefined): pathTemplate is string {
  if (pathTemplate === undefined) return false
  if (pathTemplate.startsWith('/admin/v1/')) return true
  const rule = ruleFor(method, pathTemplate)
  return (rule?.scope !== undefined || rule?.scopedByHandler === true) && rule.free !== true
}
