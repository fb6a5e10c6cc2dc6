import { randomBytes } from 'node:crypto'

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

/** `length` characters drawn uniformly from [0-9a-zA-Z] by a CSPRNG (rejection sampling, no modulo bias). */
export function randomToken(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62]
    }
  }
  return out
}

export type IdPrefix = 'acct' | 'key' | 'usr' | 'wal' | 'hold' | 'cm' | 'req' | 'inst'

/** A prefixed random id such as `acct_3fK9…`; 20 characters carry about 119 bits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(20)}`
}
