import { randomFillSync } from 'node:crypto'

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

/** Random bytes drawn from the CSPRNG in blocks: every request makes several ids. */
const pool = Buffer.alloc(8192)
let offset = pool.length

function randomByte(): number {
  if (offset >= pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  return pool[offset++] ?? 0
}

/** `length` characters drawn uniformly from [0-9a-zA-Z] by a CSPRNG (rejection sampling, no modulo bias). */
export function randomToken(length: number): string {
  let out = ''
  while (out.length < length) {
    const byte = randomByte()
    if (byte < 248) out += ALPHABET[byte % 62]
  }
  return out
}

export type IdPrefix = 'acct' | 'key' | 'usr' | 'wal' | 'hold' | 'lease' | 'cm' | 'req' | 'inst' | 'wh' | 'msg'

/** A prefixed random id such as `acct_3fK9…`; 20 characters carry about 119 bits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(20)}`
}
