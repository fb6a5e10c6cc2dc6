import { DEMO_MESSAGES_MODEL, DEMO_MODEL, DEMO_PROVIDER } from './demo-catalogue'
import { DEMO_CREDITS } from './seed'

export interface DemoFacts {
  /** The gateway's URL, with its trailing slash (`http://127.0.0.1:8080/`). */
  gatewayUrl: string
  echoBaseUrl: string
  dataDir: string
  /** Whether the data directory is the demo's own, deleted when it stops. */
  temporaryData: boolean
  key: string
  /** The admin token when the demo made it up; undefined when it is the operator's own. */
  generatedAdminToken: string | undefined
  /** Set but not used: a demo never writes to an operator's Postgres. */
  ignoredDatabaseUrl: boolean
  /** The listening address when it is not loopback (HOST set so): the key works for anyone who reaches it. */
  exposedHost?: string
}

/** The last line of the instructions: where a reader (or a test) knows they are complete. */
export const LAST_LINE = 'Ctrl-C stops the demo.'

/**
 * What `tollgate demo` prints once it listens: what is running, and calls to paste. The
 * snippets carry the key and URL in full so they work as pasted, without exporting anything.
 */
export function demoInstructions(facts: DemoFacts): string {
  const base = facts.gatewayUrl.replace(/\/$/, '')
  const key = facts.key
  const adminToken = facts.generatedAdminToken ?? '$TOLLGATE_ADMIN_TOKEN'
  const prompt = 'Hello, Tollgate'
  const lines = [
    '',
    '== Tollgate demo: the real gateway and billing, with a local ECHO in place of a model provider ==',
    '',
    ...(facts.exposedHost
      ? [
          `!! WARNING: the demo listens on ${facts.exposedHost} (HOST), beyond this machine. Anyone who can reach this port`,
          '!! can spend with the API key below and use the admin token. Unset HOST to keep the demo on 127.0.0.1.',
          '',
        ]
      : []),
    `Gateway:      ${facts.gatewayUrl}`,
    `Console:      ${base}/console (sign in with the admin token below)`,
    `Provider:     ${DEMO_PROVIDER}, an echo server inside this process (${facts.echoBaseUrl}). It is not a model:`,
    '              it answers "echo: " and your last message, and reports token counts (about four characters',
    '              a token) at made-up prices, so every call is billed. It exists only in `tollgate demo`.',
    `Models:       ${DEMO_MODEL} (chat completions, responses), ${DEMO_MESSAGES_MODEL} (messages; bare name demo-echo)`,
    facts.temporaryData
      ? `Database:     embedded, fresh in ${facts.dataDir} (under the OS temp dir, so ./data is never touched; deleted when the demo stops)`
      : `Database:     embedded, in ${facts.dataDir} (TOLLGATE_DATA_DIR; kept after the demo stops)`,
    ...(facts.ignoredDatabaseUrl ? ['              DATABASE_URL is set and ignored: the demo never writes to a Postgres server.'] : []),
    `Account:      demo, wallet funded with ${DEMO_CREDITS} credits`,
    `API key:      ${key}`,
    facts.generatedAdminToken ? `Admin token:  ${facts.generatedAdminToken} (made up for this run)` : 'Admin token:  your TOLLGATE_ADMIN_TOKEN',
    '',
    '-- curl: a billed call (the answer carries usage.cost), then the wallet it was paid from',
    '',
    `curl -s ${base}/v1/chat/completions -H "authorization: Bearer ${key}" -H "content-type: application/json" \\`,
    `  -d '{"model":"${DEMO_MODEL}","messages":[{"role":"user","content":"${prompt}"}]}'`,
    `curl -s ${base}/v1/wallet -H "authorization: Bearer ${key}"`,
    '',
    '-- OpenAI SDK (Python: pip install openai)',
    '',
    "python3 - <<'EOF'",
    'from openai import OpenAI',
    `client = OpenAI(base_url="${base}/v1", api_key="${key}")`,
    `answer = client.chat.completions.create(model="${DEMO_MODEL}", messages=[{"role": "user", "content": "${prompt}"}])`,
    'print(answer.choices[0].message.content, answer.usage)',
    'EOF',
    '',
    '-- Anthropic SDK (Python: pip install anthropic)',
    '',
    "python3 - <<'EOF'",
    'import anthropic',
    `client = anthropic.Anthropic(base_url="${base}", api_key="${key}")`,
    `message = client.messages.create(model="demo-echo", max_tokens=100, messages=[{"role": "user", "content": "${prompt}"}])`,
    'print(message.content[0].text, message.usage)',
    'EOF',
    '',
    '-- The books and the gateway itself (admin token)',
    '',
    `curl -s "${base}/admin/v1/ledger?limit=5" -H "authorization: Bearer ${adminToken}"`,
    `curl -s ${base}/metrics -H "authorization: Bearer ${adminToken}"`,
    '',
    'Request logs are the JSON lines on this terminal.',
    LAST_LINE,
    '',
  ]
  return lines.join('\n')
}
