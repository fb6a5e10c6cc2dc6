import { createApp, type Gateway } from '../../src/app'
import { type Config, loadConfig } from '../../src/config/config'
import { createServices, type ServiceOptions, type Services } from '../../src/services/services'
import type { FreshDatabase } from './databases'

export const ADMIN_TOKEN = 'test-admin-token-0123456789'

export interface TestGateway {
  gateway: Gateway
  services: Services
  logs: string[]
  call(method: string, path: string, options?: CallOptions): Promise<Reply>
  admin(method: string, path: string, body?: unknown): Promise<Reply>
  /** An account with `credits` in its wallet. */
  account(credits?: number): Promise<{ id: string }>
  /** A key on a new or given account; returns the full secret. */
  key(options?: Record<string, unknown>): Promise<{ id: string; key: string; accountId: string }>
}

export interface CallOptions {
  headers?: Record<string, string>
  /** An object is sent as JSON; a string or bytes as they are. */
  body?: unknown
}

export interface Reply {
  status: number
  headers: Headers
  text: string
  /** The parsed JSON body; undefined when the body is not JSON. */
  json: any
}

/**
 * The configuration of an in-process test gateway. Its calls are held exactly
 * (`TOLLGATE_CREDIT_LEASE=0`), so a test reads each call's own hold, charge and release on the
 * ledger. The default configuration, credit leases, is what the lease suites
 * (test/billing/credit-lease*.test.ts), the money suites run in both modes (LEASE_MODES) and
 * every test of a real process (test/support/process.ts passes no such setting) run under.
 */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({ TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test', TOLLGATE_CREDIT_LEASE: '0', ...env })
}

/** The two ways calls are held, for the suites whose guarantees must hold in both: the default (leases) and exact holds. */
export const LEASE_MODES = [
  { name: 'credit leases (the default)', env: { TOLLGATE_CREDIT_LEASE: undefined } },
  { name: 'exact holds', env: { TOLLGATE_CREDIT_LEASE: '0' } },
] as const

export function startGateway(
  database: FreshDatabase,
  options: { config?: Config; now?: () => number; refetchCooldownMs?: number; closings?: ServiceOptions['closings'] } = {},
): TestGateway {
  const services = createServices({
    config: options.config ?? testConfig(),
    database,
    now: options.now,
    closings: options.closings,
    userTokens: { refetchCooldownMs: options.refetchCooldownMs ?? 0 },
  })
  const logs: string[] = []
  const gateway = createApp(services, { log: (line) => logs.push(line) })

  async function call(method: string, path: string, { headers = {}, body }: CallOptions = {}): Promise<Reply> {
    const encoded = body === undefined || typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
    const response = await gateway.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { ...(encoded !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: encoded as BodyInit | undefined,
      }),
    )
    const text = await response.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  }

  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body })

  async function account(credits = 0) {
    const created = await admin('POST', '/accounts', { name: 'test account' })
    if (created.status !== 201) throw new Error(`account: ${created.text}`)
    if (credits) await admin('POST', `/accounts/${created.json.id}/credits`, { amount: credits })
    return { id: created.json.id as string }
  }

  async function key(options: Record<string, unknown> = {}) {
    const accountId = (options.account_id as string | undefined) ?? (await account(100)).id
    const created = await admin('POST', '/keys', { env: 'prod', ...options, account_id: accountId })
    if (created.status !== 201) throw new Error(`key: ${created.text}`)
    return { id: created.json.id as string, key: created.json.key as string, accountId }
  }

  return { gateway, services, logs, call, admin, account, key }
}

export const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` })
