import { createHash, timingSafeEqual } from 'node:crypto'
import { randomToken } from '../util/ids'

/**
 * API keys are `tollgate_sk_<env>_<secret>` (docs/api.md#credentials). The secret has 40 characters of
 * [0-9a-zA-Z] (about 238 bits), so a plain SHA-256 is a safe hash at rest: nothing here can be
 * guessed, so there is nothing for a slow hash to protect.
 */

export const KEY_SERVICE_WORD = 'tollgate'
export type KeyEnv = 'prod' | 'dev'
const SECRET_LENGTH = 40
const MIN_SECRET_LENGTH = 32

export function generateApiKey(env: KeyEnv): string {
  return `${KEY_SERVICE_WORD}_sk_${env}_${randomToken(SECRET_LENGTH)}`
}

/** Shaped `<word>_sk_…`: an API key attempt, right or wrong; anything else may be a user token. */
export function looksLikeApiKey(credential: string): boolean {
  return /^[A-Za-z0-9]+_sk_/.test(credential)
}

/** The key's environment when it is well formed, else undefined. */
export function parseApiKey(credential: string): { env: KeyEnv } | undefined {
  const match = /^([A-Za-z0-9]+)_sk_(prod|dev)_([A-Za-z0-9]+)$/.exec(credential)
  if (!match || match[1] !== KEY_SERVICE_WORD || (match[3]?.length ?? 0) < MIN_SECRET_LENGTH) return undefined
  return { env: match[2] as KeyEnv }
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}

export function keyHint(key: string): string {
  return key.slice(-4)
}
