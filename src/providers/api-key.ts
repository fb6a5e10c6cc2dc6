import type { ProviderCredential, ProviderEntry } from './provider-config'

/** The credential of an API that takes a key: the entry's `apiKey`, or the value of the variable its `apiKeyEnv` names. */
export function readApiKey(entry: ProviderEntry, env: Readonly<Record<string, string | undefined>>): ProviderCredential {
  return {
    credential: entry.apiKey ?? (entry.apiKeyEnv ? env[entry.apiKeyEnv] : undefined),
    serviceAccount: undefined,
    named: entry.apiKey !== undefined || entry.apiKeyEnv !== undefined,
  }
}

/** An entry without its key names the variable it reads (a literal key would have set it). */
export function missingApiKey(entry: ProviderEntry): string {
  return entry.apiKeyEnv ?? 'apiKey'
}
