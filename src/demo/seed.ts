import { type TObject, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { AdminInput } from '../admin/operation'
import { ADMIN_OPERATIONS } from '../admin/operations'
import type { Services } from '../services/services'

/** How many credits the demo account starts with: hundreds of demo calls. */
export const DEMO_CREDITS = 10

export interface DemoAccount {
  accountId: string
  /** The API key's secret, shown once, as the admin API shows it. */
  key: string
}

const CreatedAccount = Type.Object({ id: Type.String() })
const CreatedKey = Type.Object({ key: Type.String() })

/**
 * A funded account and an API key for the demo, made by the admin operations the admin API and
 * `tollgate admin` run (create the account, credit its wallet, create a key), so the demo's
 * books are written exactly as an operator's would be.
 */
export async function seedDemoAccount(services: Services): Promise<DemoAccount> {
  const account = await run(services, 'accounts create', { body: { name: 'demo' } }, CreatedAccount)
  await run(services, 'accounts credit', { params: { id: account.id }, body: { amount: DEMO_CREDITS, note: 'tollgate demo' } }, Type.Object({}))
  const key = await run(services, 'keys create', { body: { account_id: account.id, env: 'dev', name: 'demo key' } }, CreatedKey)
  return { accountId: account.id, key: key.key }
}

/** One admin operation by its CLI words, its input checked by the operation's own schemas, its answer by `answer`. */
async function run<T extends TObject>(services: Services, command: string, input: Partial<AdminInput>, answer: T) {
  const operation = ADMIN_OPERATIONS.find((candidate) => candidate.command.join(' ') === command)
  if (!operation) throw new Error(`no admin operation "${command}"`)
  const full: AdminInput = { params: input.params ?? {}, query: input.query ?? {}, body: input.body ?? {} }
  for (const [part, schema] of [
    ['params', operation.params],
    ['body', operation.body],
  ] as const) {
    if (schema && !Value.Check(schema, full[part])) throw new Error(`admin ${command}: the demo's ${part} does not fit the operation`)
  }
  const result = await operation.run(services, full)
  if (!Value.Check(answer, result)) throw new Error(`admin ${command}: unexpected answer`)
  return result
}
