import { readFileSync } from 'node:fs'
import type { ProviderConfigProblem, ProviderCredential, ProviderEntry, ServiceAccount } from '../provider-config'

/**
 * A Vertex entry's credential: `apiKey` or the variable `accessTokenEnv` names, both an access
 * token used as it is, and a service-account key from `serviceAccountKeyFile`, read now so a
 * missing or malformed file stops the start (access-token.ts signs tokens with it).
 */
export function readVertexCredential(entry: ProviderEntry, env: Readonly<Record<string, string | undefined>>): ProviderCredential | ProviderConfigProblem {
  const credential = entry.apiKey ?? (entry.accessTokenEnv ? env[entry.accessTokenEnv] : undefined)
  const serviceAccount = entry.serviceAccountKeyFile ? readServiceAccount(entry.serviceAccountKeyFile) : undefined
  if (serviceAccount && 'message' in serviceAccount) return serviceAccount
  return {
    credential,
    serviceAccount,
    named: entry.apiKey !== undefined || entry.accessTokenEnv !== undefined || serviceAccount !== undefined,
  }
}

/** An entry without a credential names the variable it reads, or else lacks a key file (a literal token would have set it). */
export function missingVertexCredential(entry: ProviderEntry): string {
  return entry.accessTokenEnv ? `${entry.accessTokenEnv} (or serviceAccountKeyFile)` : 'serviceAccountKeyFile'
}

/** A Google service-account key file: the fields token signing needs. */
function readServiceAccount(path: string): ServiceAccount | ProviderConfigProblem {
  const field = 'serviceAccountKeyFile'
  let key: { client_email?: unknown; private_key?: unknown; token_uri?: unknown }
  try {
    key = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    return { field, message: `cannot read a JSON key from ${path}` }
  }
  if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    return { field, message: `${path} has no client_email and private_key` }
  }
  return {
    clientEmail: key.client_email,
    privateKey: key.private_key,
    tokenUri: typeof key.token_uri === 'string' ? key.token_uri : 'https://oauth2.googleapis.com/token',
  }
}
