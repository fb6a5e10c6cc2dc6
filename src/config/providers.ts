import type { ProviderConfig, ProviderEntry } from '../providers/provider-config'
import { adapterFor } from '../providers/registry'
import { ConfigError } from './config-error'
import type { Env } from './environment'

/**
 * Each entry with its credential, defaults and a `baseUrl` without trailing slashes (adapters
 * append paths to it as it is). Its API's adapter reads the credential where that API's entries
 * name it, and checks what that API requires.
 */
export function resolveProviders(entries: Record<string, ProviderEntry>, env: Env, source: string): Map<string, ProviderConfig> {
  const providers = new Map<string, ProviderConfig>()
  for (const [name, entry] of Object.entries(entries)) {
    const adapter = adapterFor(entry)
    const read = adapter.readCredential(entry, env)
    // A key file names itself in the message: its path says more than the config file's.
    if ('message' in read) throw new ConfigError(`providers.${name}.${read.field}: ${read.message}`)
    const { credential, serviceAccount } = read
    const provider: ProviderConfig = {
      ...entry,
      baseUrl: entry.baseUrl.replace(/\/+$/, ''),
      name,
      credential,
      serviceAccount,
      configured: !read.named || credential !== undefined || serviceAccount !== undefined,
      pollIntervalMs: entry.pollIntervalMs ?? 5000,
      timeoutMs: entry.timeoutMs ?? 600_000,
      jobTimeoutMs: entry.jobTimeoutMs ?? 900_000,
      streamIdleTimeoutMs: entry.streamIdleTimeoutMs ?? 120_000,
      cooldownSeconds: entry.cooldownSeconds ?? 30,
    }
    const [problem] = adapter.checkConfig(provider)
    if (problem) throw new ConfigError(`${source}: providers.${name}${problem.field ? `.${problem.field}` : ''}: ${problem.message}`)
    providers.set(name, provider)
  }
  return providers
}
