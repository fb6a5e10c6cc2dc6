/**
 * The proxy an upstream request goes through, from the environment, the way Bun's fetch reads
 * it (checked against it: docs/operations.md#how-upstreams-are-reached): `HTTPS_PROXY` for an
 * https target, `HTTP_PROXY` for an http one (no fallback from one to the other), upper case
 * before lower case, and none when `NO_PROXY` names the host. Loopback hosts are not exempt
 * unless listed, as with fetch.
 */

type Env = Record<string, string | undefined>

export function proxyFor(target: URL, env: Env = process.env): URL | undefined {
  const value = target.protocol === 'https:' ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy)
  if (!value) return undefined
  const noProxy = env.NO_PROXY ?? env.no_proxy
  if (noProxy && bypasses(target, noProxy)) return undefined
  try {
    // A bare `host:port`, as some set it, means an http proxy.
    return new URL(value.includes('://') ? value : `http://${value}`)
  } catch {
    return undefined
  }
}

/**
 * Whether `NO_PROXY` (entries separated by commas or spaces) exempts the target: `*` exempts
 * everything; `example.com` and `.example.com` exempt that host and every host below it; an
 * entry with `:port` exempts that port only; an IP address matches exactly (no CIDR ranges).
 */
export function bypasses(target: URL, noProxy: string): boolean {
  const host = target.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  const port = target.port || (target.protocol === 'https:' ? '443' : '80')
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase()
    if (entry === '') continue
    if (entry === '*') return true
    const { name, entryPort } = splitPort(entry)
    if (entryPort !== undefined && entryPort !== port) continue
    const domain = name.replace(/^\*?\./, '')
    if (host === domain || host.endsWith(`.${domain}`)) return true
  }
  return false
}

/** `host:port`, `[v6]:port` or a bare name or address. */
function splitPort(entry: string): { name: string; entryPort: string | undefined } {
  const bracketed = /^\[(.*)\](?::(\d+))?$/.exec(entry)
  if (bracketed) return { name: bracketed[1] ?? '', entryPort: bracketed[2] }
  const colon = entry.lastIndexOf(':')
  // More than one colon without brackets: an IPv6 address, no port.
  if (colon < 0 || entry.indexOf(':') !== colon) return { name: entry, entryPort: undefined }
  return { name: entry.slice(0, colon), entryPort: entry.slice(colon + 1) }
}
