import { expect } from 'bun:test'
import type { TestGateway } from '../support/gateway'

/**
 * A coding agent's calls carry its session (docs/billing.md#attribution): every charge of the
 * key names one session id, and the usage report grouped by session shows what it cost.
 */
export async function expectOneSession(gateway: TestGateway, keyId: string, charges: { amount: number; session_id: string | null }[]) {
  const sessions = new Set(charges.map((charge) => charge.session_id))
  expect(sessions.size).toBe(1)
  const [session] = sessions
  expect(session).toMatch(/^[\x21-\x7e]{1,128}$/)
  const rows = (await gateway.admin('GET', `/usage?key_id=${keyId}&group_by=month,session`)).json.data as { session_id: string | null; cost: number }[]
  const total = charges.reduce((sum, charge) => sum + Math.round(charge.amount * 1e6), 0)
  expect(rows.map((row) => ({ session_id: row.session_id, cost: Math.round(row.cost * 1e6) }))).toEqual([{ session_id: session ?? null, cost: total }])
}
