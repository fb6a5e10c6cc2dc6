/**
 * What the router knows about a path, asked after the fact: the methods served there, to tell
 * a wrong method (405) from an unknown path (404), and the route's template, which is what a
 * log line names (`/admin/v1/keys/:id`, never the id or whatever else a client put in a path).
 */
export class RouteMethods {
  private readonly patterns: { pattern: RegExp; method: string; path: string; isStatic: boolean }[]

  constructor(routes: readonly { method: string; path: string }[]) {
    this.patterns = routes.map((route) => ({
      method: route.method,
      path: route.path,
      pattern: toPattern(route.path),
      isStatic: !route.path.includes(':') && !route.path.includes('*'),
    }))
  }

  /** The methods served at this path; empty when the path is unknown. */
  allowed(pathname: string): string[] {
    const methods = this.patterns.filter((route) => route.pattern.test(pathname)).map((route) => route.method)
    return [...new Set(methods)].sort()
  }

  /** The template of the route serving this path (a static route before a parametric one, as the router picks); undefined when none does. */
  template(pathname: string): string | undefined {
    const matching = this.patterns.filter((route) => route.pattern.test(pathname))
    return (matching.find((route) => route.isStatic) ?? matching[0])?.path
  }
}

function toPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment === '*' ? '.+' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}/?$`)
}
