import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { type CredentialRule, ruleFor } from '../../auth/endpoint-rules'

/**
 * The OpenAPI document at /swagger/json. Elysia's generator reads each endpoint's schemas
 * (`body`, `params`, `query`, `response`); then three things only the gateway knows are added:
 * - each endpoint's `detail.responses` (error responses, streams, audio, answers documented
 *   without validation) is merged with what `response:` generated, status by status;
 * - security comes from the endpoint rules table (docs/api.md#authentication-per-route), so the
 *   document cannot disagree with what is enforced: public endpoints carry `security: []`;
 * - each parameter carries its schema's description as its own, where viewers show it (the
 *   generator leaves it inside the schema, and drops it from a union of literals);
 * - a path ending in `/*` (a model id holds a slash) is named after the path parameter its
 *   operation declares: `/v1/models/*` is documented as `/v1/models/{id}`, and one with two
 *   (the Gemini API's model and method) as `/v1beta/models/{model}:{method}`.
 */
export function openApiDocument(app: AnyElysia, base: OpenApiObject): OpenApiObject {
  const generated = toOpenAPISchema(app)
  const paths: Record<string, OpenApiObject> = {}
  const generatedPaths = asObject(generated.paths)
  // Every endpoint of the app, read as Elysia's generator reads them.
  // biome-ignore lint/complexity/useLiteralKeys: Elysia's types mark getGlobalRoutes protected; its own generator calls it the same way.
  for (const route of app['getGlobalRoutes']()) {
    const detail = asObject(route.hooks?.detail)
    if (detail.hide === true) continue
    const method = route.method.toLowerCase()
    const generatedPath = route.path.replace(/:([^/]+)/g, '{$1}')
    const operation = asObject(asObject(generatedPaths[generatedPath])[method])
    if (Object.keys(operation).length === 0) continue
    operation.responses = mergeResponses(asObject(operation.responses), asObject(detail.responses))
    if (Array.isArray(operation.parameters))
      operation.parameters = operation.parameters.map((parameter) => describedParameter(asObject(parameter), route.hooks))
    const rule = ruleFor(route.method, route.path)
    if (rule) operation.security = securityOf(rule.credentials)
    const path = documentedPath(generatedPath, operation)
    paths[path] = { ...paths[path], [method]: operation }
  }
  const components = asObject(base.components)
  return {
    ...base,
    openapi: '3.1.0',
    paths,
    components: { ...components, schemas: { ...asObject(asObject(generated.components).schemas), ...asObject(components.schemas) } },
  }
}

/** A node of an OpenAPI document: free-form JSON (the framework generates it; the gateway adds and merges a few named fields). */
type OpenApiObject = Record<string, unknown>

/** The security requirement of a credential rule; an empty requirement (`{}`) makes the credential optional. */
function securityOf(credentials: CredentialRule): OpenApiObject[] {
  switch (credentials) {
    case 'bearer':
      return [{ apiKey: [] }]
    case 'bearer-or-x-api-key':
      return [{ apiKey: [] }, { xApiKey: [] }]
    case 'google-api-key':
      return [{ apiKey: [] }, { googleApiKey: [] }, { googleKeyParameter: [] }]
    case 'optional-bearer':
      return [{}, { apiKey: [] }]
    case 'public':
      return []
  }
}

/** Per status: the generated JSON answer and the declared contents side by side, the declared description first. */
function mergeResponses(generated: OpenApiObject, declared: OpenApiObject): OpenApiObject {
  const merged: OpenApiObject = { ...generated }
  for (const [status, response] of Object.entries(declared)) {
    const existing = asObject(generated[status])
    const added = asObject(response)
    merged[status] = {
      ...existing,
      ...added,
      ...(existing.content || added.content ? { content: { ...asObject(existing.content), ...asObject(added.content) } } : {}),
    }
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)))
}

/** A parameter with `description` set from its schema, or from the endpoint's own schema of its query or path. */
function describedParameter(parameter: OpenApiObject, hooks: unknown): OpenApiObject {
  if (typeof parameter.description === 'string' && parameter.description !== '') return parameter
  const where = parameter.in === 'path' ? 'params' : parameter.in === 'query' ? 'query' : undefined
  const declared = where && typeof parameter.name === 'string' ? asObject(asObject(asObject(asObject(hooks)[where]).properties)[parameter.name]) : {}
  const description = asObject(parameter.schema).description ?? declared.description
  return typeof description === 'string' ? { ...parameter, description } : parameter
}

function documentedPath(path: string, operation: OpenApiObject): string {
  if (!path.endsWith('/*')) return path
  const parameters = Array.isArray(operation.parameters) ? operation.parameters.map(asObject) : []
  // Several path parameters share the one segment, colon-separated: `/v1beta/models/{model}:{method}`.
  const names = parameters.filter((parameter) => parameter.in === 'path' && typeof parameter.name === 'string').map((parameter) => `{${parameter.name}}`)
  return names.length > 0 ? `${path.slice(0, -1)}${names.join(':')}` : path
}

/** The document is plain JSON built from plain JSON: objects are read as such, anything else as empty. */
function asObject(value: unknown): OpenApiObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as OpenApiObject) : {}
}
