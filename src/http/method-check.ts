/**
 * What the router knows about a path, asked after the fact: the methods served there, to tell
 * a wrong method (405) from an unknown path (404), and the endpoint's path template, which is what a
 * log line names (`/admin/v1/keys/:id`, never the id or whatever else a client put in a path).
 */
export class EndpointMethods {
  private readonly patterns: { pattern: RegExp; method: string; path: string; isStatic: boolean }[]

  constructor(endpoints: readonly { method: string; path: string }[]) {
    this.patterns = endpoints.map((endpoint) => ({
      method: endpoint.method,
      path: endpoint.path,
      pattern: toPattern(endpoint.path),
      isStatic: !endpoint.path.includes(':') && !endpoint.path.includes('*'),
    }))
  }

  /** The methods served at this path; empty when the path is unknown. */
  allowed(pathname: string): string[] {
    const methods = this.patterns.filter((endpoint) => endpoint.pattern.test(pathname)).map((endpoint) => endpoint.method)
    return [...new Set(methods)].sort()
  }

  /** The path template of the endpoint serving this path (a static one before a parametric one, as the router picks); undefined when none does. */
  template(pathname: string): string | undefined {
    const matching = this.patterns.filter((endpoint) => endpoint.pattern.test(pathname))
    return (matching.find((endpoint) => endpoint.isStatic) ?? matching[0])?.path
  }
}

function toPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment === '*' ? '.+' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}/?$`)
}
