/**
 * Tells a wrong method (405) from an unknown path (404): the router only knows "no match".
 */
export class RouteMethods {
  private readonly patterns: { pattern: RegExp; method: string }[]

  constructor(routes: readonly { method: string; path: string }[]) {
    this.patterns = routes.map((route) => ({ method: route.method, pattern: toPattern(route.path) }))
  }

  /** The methods served at this path; empty when the path is unknown. */
  allowed(pathname: string): string[] {
    const methods = this.patterns.filter((route) => route.pattern.test(pathname)).map((route) => route.method)
    return [...new Set(methods)].sort()
  }
}

function toPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment === '*' ? '.+' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}/?$`)
}
