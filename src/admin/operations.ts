import { Type } from '@sinclair/typebox'
import { createAccount, findAccount, setLowBalanceThreshold } from '../billing/accounts'
import { spendNow } from '../billing/spend'
import { creditWallet, type EntryParties, ensureWallet, findWallet } from '../billing/wallets'
import { CUSTOM_PREFIX } from '../catalog/custom-models'
import type { PayerKind } from '../db/schema'
import { InvalidRequestError, NotFoundError } from '../errors/kinds'
import type { Services } from '../services/services'
import { ACTIVITY_OPERATIONS } from './activity-operations'
import { idParam } from './id-param'
import { KeyFields } from './key-fields'
import { MODEL_OPERATIONS } from './model-operations'
import { type AdminOperation, defineOperation } from './operation'
import { QuotasField, quotaChanges, wholeQuotas } from './quota-fields'
import { REPORTING_OPERATIONS } from './reporting-operations'
import { USAGE_OPERATION } from './usage-operations'
import { accountView, amountToMicros, keyView, parseTimestamp, quotasView, spentView, walletView } from './views'
import { WEBHOOK_OPERATIONS } from './webhook-operations'

const AccountIdParam = idParam('account', 'acct')
const KeyIdParam = idParam('API key', 'key')
const Amount = Type.Number({ description: 'Credits, up to 6 decimals; negative for an adjustment down.' })
/** OpenID Connect bounds a subject at 255 characters; ids and issuers are far shorter than these. */
const Issuer = Type.String({ minLength: 1, maxLength: 500, description: "The user token's issuer (`iss`), as TOLLGATE_OIDC_ISSUER names it" })
const Subject = Type.String({ minLength: 1, maxLength: 255, description: "The user's subject (`sub`) in the issuer's tokens" })
const AccountId = Type.String({ minLength: 1, maxLength: 100 })
const IdempotencyKey = Type.String({ minLength: 1, maxLength: 200, description: 'The same key twice applies once.' })

async function requireAccount(services: Pick<Services, 'db'>, id: string, param?: string) {
  const found = await findAccount(services.db, id)
  if (!found) throw new NotFoundError(`No account '${id}'.`, { param })
  return found
}

async function requireKey(services: Pick<Services, 'keys'>, id: string) {
  const row = await services.keys.get(id)
  if (!row) throw new NotFoundError(`No API key '${id}'.`)
  return row
}

/** A key's record with its allotment and its spend in the current periods. */
export async function keyWithAllotment(services: Pick<Services, 'db' | 'keys' | 'now'>, id: string) {
  const row = await requireKey(services, id)
  const [allotment, spent] = await Promise.all([findWallet(services.db, 'key_allotment', row.id), spendNow(services.db, row.id, services.now())])
  return keyView(row, allotment, spent)
}

/** A user's allotment, with the limits in force (`quotas_from`: the user's own, the default, or null for none) and the spend in the current periods. */
async function userAllotment(services: Pick<Services, 'db' | 'userQuotas' | 'now'>, userId: string, sub: string, iss: string) {
  const [wallet, limits, spent] = await Promise.all([
    findWallet(services.db, 'user_allotment', userId),
    services.userQuotas.limitsOf(userId),
    spendNow(services.db, userId, services.now()),
  ])
  if (!wallet) throw new NotFoundError(`No user '${sub}' of issuer '${iss}'.`)
  return { ...walletView(wallet), quotas: quotasView(limits.quotas), quotas_from: limits.source, spent: spentView(spent) }
}

/** Adds a request's `amount` to the owner's wallet or allotment, creating an empty one first when missing. */
async function topUp(
  services: Pick<Services, 'db'>,
  kind: PayerKind,
  ownerId: string,
  credit: { amount: number; idempotency_key?: string; note?: string },
  parties: EntryParties,
) {
  const wallet = await ensureWallet(services.db, kind, ownerId)
  const updated = await creditWallet(services.db, wallet.id, amountToMicros(credit.amount, 'amount'), {
    idempotencyKey: credit.idempotency_key,
    note: credit.note,
    parties,
  })
  return walletView(updated)
}

export const ADMIN_OPERATIONS: readonly AdminOperation[] = [
  defineOperation({
    command: ['accounts', 'create'],
    method: 'POST',
    path: '/accounts',
    summary: 'Create an account with an empty wallet',
    body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }),
    status: 201,
    run: async (services, { body }) => accountView(await createAccount(services.db, body.name)),
  }),
  defineOperation({
    command: ['accounts', 'get'],
    method: 'GET',
    path: '/accounts/:id',
    summary: 'An account and its wallet',
    params: AccountIdParam,
    run: async (services, { params }) => accountView(await requireAccount(services, params.id)),
  }),
  defineOperation({
    command: ['accounts', 'update'],
    method: 'PATCH',
    path: '/accounts/:id',
    summary: "Set an account's low-balance threshold (null clears it): below it, its wallet raises a balance.low alert",
    params: AccountIdParam,
    body: Type.Object({ low_balance_threshold: Type.Union([KeyFields.low_balance_threshold, Type.Null()]) }, { additionalProperties: false }),
    run: async (services, { params, body }) => {
      const threshold = body.low_balance_threshold === null ? null : amountToMicros(body.low_balance_threshold, 'low_balance_threshold')
      const updated = await setLowBalanceThreshold(services.db, params.id, threshold)
      if (!updated) throw new NotFoundError(`No account '${params.id}'.`)
      return accountView(updated)
    },
  }),
  defineOperation({
    command: ['accounts', 'credit'],
    method: 'POST',
    path: '/accounts/:id/credits',
    summary: "Add credits to an account's wallet (negative: an adjustment)",
    params: AccountIdParam,
    body: Type.Object({ amount: Amount, idempotency_key: Type.Optional(IdempotencyKey), note: Type.Optional(Type.String({ maxLength: 1000 })) }),
    run: async (services, { params, body }) => {
      const { account } = await requireAccount(services, params.id)
      return { wallet: await topUp(services, 'wallet', account.id, body, { accountId: account.id }) }
    },
  }),
  defineOperation({
    command: ['keys', 'create'],
    method: 'POST',
    path: '/keys',
    summary: 'Create an API key; the answer is the only place the full key ever appears',
    body: Type.Object({
      account_id: AccountId,
      env: Type.Union([Type.Literal('prod'), Type.Literal('dev')]),
      name: Type.Optional(Type.String({ maxLength: 200 })),
      scopes: Type.Optional(KeyFields.scopes),
      allowed_models: Type.Optional(KeyFields.allowed_models),
      monthly_quota: Type.Optional(KeyFields.monthly_quota),
      quotas: Type.Optional(KeyFields.quotas),
      low_balance_threshold: Type.Optional(KeyFields.low_balance_threshold),
      allotment: Type.Optional(Type.Number({ minimum: 0 })),
      expires_at: Type.Optional(KeyFields.expires_at),
      rpm: Type.Optional(KeyFields.rpm),
      tpm: Type.Optional(KeyFields.tpm),
    }),
    status: 201,
    run: async (services, { body }) => {
      await requireAccount(services, body.account_id, 'account_id')
      const { row, key } = await services.keys.create({
        accountId: body.account_id,
        env: body.env,
        name: body.name,
        scopes: body.scopes,
        allowedModels: body.allowed_models,
        quotas: quotaChanges(body),
        lowBalanceThreshold: body.low_balance_threshold === undefined ? undefined : amountToMicros(body.low_balance_threshold, 'low_balance_threshold'),
        allotment: body.allotment === undefined ? undefined : amountToMicros(body.allotment, 'allotment'),
        expiresAt: body.expires_at === undefined ? undefined : parseTimestamp(body.expires_at, 'expires_at'),
        rpm: body.rpm,
        tpm: body.tpm,
      })
      return { ...(await keyWithAllotment(services, row.id)), key }
    },
  }),
  defineOperation({
    command: ['keys', 'get'],
    method: 'GET',
    path: '/keys/:id',
    summary: "An API key's record (never its secret)",
    params: KeyIdParam,
    run: (services, { params }) => keyWithAllotment(services, params.id),
  }),
  defineOperation({
    command: ['keys', 'revoke'],
    method: 'POST',
    path: '/keys/:id/revoke',
    summary: 'Revoke an API key: at once here, within 5 seconds on other instances',
    params: KeyIdParam,
    run: async (services, { params }) => {
      await requireKey(services, params.id)
      await services.keys.revoke(params.id)
      return keyWithAllotment(services, params.id)
    },
  }),
  defineOperation({
    command: ['keys', 'allotment'],
    method: 'POST',
    path: '/keys/:id/allotment',
    summary: "Add credits to a key's allotment; a key with an allotment pays only from it",
    params: KeyIdParam,
    body: Type.Object({ amount: Amount, idempotency_key: Type.Optional(IdempotencyKey) }),
    run: async (services, { params, body }) => {
      const key = await requireKey(services, params.id)
      return topUp(services, 'key_allotment', key.id, body, { accountId: key.accountId, keyId: key.id, env: key.env })
    },
  }),
  defineOperation({
    command: ['users', 'credit'],
    method: 'POST',
    path: '/users/credits',
    summary: "Add credits to a user's allotment (the user is created when new)",
    body: Type.Object({
      iss: Issuer,
      sub: Subject,
      amount: Amount,
      idempotency_key: Type.Optional(IdempotencyKey),
    }),
    run: async (services, { body }) => {
      const user = await services.users.findOrCreate(body.iss, body.sub)
      return topUp(services, 'user_allotment', user.id, body, { userSub: user.subject })
    },
  }),
  defineOperation({
    command: ['users', 'allotment'],
    method: 'GET',
    path: '/users/allotment',
    summary: "A user's allotment, spend limits and spend in the current periods",
    query: Type.Object({ iss: Issuer, sub: Subject }),
    run: async (services, { query }) => {
      const user = await services.users.find(query.iss, query.sub)
      if (!user) throw new NotFoundError(`No user '${query.sub}' of issuer '${query.iss}'.`)
      return userAllotment(services, user.id, query.sub, query.iss)
    },
  }),
  defineOperation({
    command: ['users', 'quotas'],
    method: 'PUT',
    path: '/users/quotas',
    summary: "Set a user's own spend limits by period (the user is created when new); {} clears them: the default applies",
    body: Type.Object({ iss: Issuer, sub: Subject, quotas: QuotasField }),
    run: async (services, { body }) => {
      const user = await services.users.findOrCreate(body.iss, body.sub)
      await services.userQuotas.setOwn(user.id, wholeQuotas(body.quotas))
      return userAllotment(services, user.id, body.sub, body.iss)
    },
  }),
  defineOperation({
    command: ['users', 'default-quotas'],
    method: 'PUT',
    path: '/users/default-quotas',
    summary: 'Set the spend limits by period of every user without their own; {} clears them',
    body: Type.Object({ quotas: QuotasField }),
    run: async (services, { body }) => {
      await services.userQuotas.setDefault(wholeQuotas(body.quotas))
      return { quotas: quotasView(await services.userQuotas.readDefault()) }
    },
  }),
  defineOperation({
    command: ['users', 'default-quotas', 'get'],
    method: 'GET',
    path: '/users/default-quotas',
    summary: 'The spend limits by period of every user without their own',
    run: async (services) => ({ quotas: quotasView(await services.userQuotas.readDefault()) }),
  }),
  defineOperation({
    command: ['custom-models', 'create'],
    method: 'POST',
    path: '/custom-models',
    summary: "Create an account's custom model custom/<name> on a base chat model",
    body: Type.Object({
      account_id: AccountId,
      name: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$' }),
      base_model: Type.String({ minLength: 1, maxLength: 200 }),
      system: Type.Optional(Type.String()),
      defaults: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    status: 201,
    run: async (services, { body }) => {
      await requireAccount(services, body.account_id, 'account_id')
      if (services.config.models.find((model) => model.id === body.base_model)?.type !== 'chat') {
        throw new InvalidRequestError(`base_model '${body.base_model}' is not a chat model of the catalogue.`, { param: 'base_model' })
      }
      const row = await services.customModels.create({
        accountId: body.account_id,
        name: body.name,
        baseModel: body.base_model,
        system: body.system,
        defaults: body.defaults,
      })
      if (!row) throw new InvalidRequestError(`The account already has a custom model '${body.name}'.`, { param: 'name' })
      return { id: `${CUSTOM_PREFIX}${row.name}`, account_id: row.accountId, base_model: row.baseModel, system: row.system, defaults: row.defaults }
    },
  }),
  // Lists, key edits and the ledger (docs/operations.md#reporting).
  ...REPORTING_OPERATIONS,
  ...ACTIVITY_OPERATIONS,
  USAGE_OPERATION,
  // Alerts by webhook (docs/operations.md#alerts).
  ...WEBHOOK_OPERATIONS,
  // The catalogue with its routes' state (docs/operations.md#models).
  ...MODEL_OPERATIONS,
]
