import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { LAST_LINE } from '../src/demo/instructions'
import { startGatewayProcess } from './support/process'

/**
 * `tollgate demo` as a newcomer runs it: a child process with nothing configured, whose printed
 * key, URL and curl command are used as printed, against the real gateway and its billing.
 */

interface DemoProcess {
  child: ReturnType<typeof Bun.spawn>
  output: string
  /** The gateway's URL without its trailing slash. */
  base: string
  key: string
  /** Its log lines (stderr) so far. */
  logs: () => string
}

/**
 * Starts the demo and reads its stdout until the instructions are complete; the rest is drained,
 * and its log lines are kept (`logs`). It stops without the drain a load balancer needs (TOLLGATE_DRAIN_SECONDS=0), which
 * test/lifecycle/drain.test.ts tests.
 */
async function startDemo(env: Record<string, string>): Promise<DemoProcess> {
  const child = Bun.spawn(['bun', 'src/main.ts', 'demo'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', TOLLGATE_DRAIN_SECONDS: '0', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let output = ''
  while (!output.includes(LAST_LINE)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the demo exited before printing its instructions:\n${output}`)
    output += decoder.decode(value, { stream: true })
  }
  void (async () => {
    while (!(await reader.read()).done) {}
  })()
  let logs = ''
  const logDecoder = new TextDecoder()
  void (async () => {
    for await (const chunk of child.stderr) logs += logDecoder.decode(chunk, { stream: true })
  })()
  const gateway = output.match(/^Gateway: +(\S+)$/m)?.[1]
  const key = output.match(/^API key: +(tollgate_sk_dev_\S+)$/m)?.[1]
  if (!gateway || !key) throw new Error(`no gateway URL or key in:\n${output}`)
  return { child, output, base: gateway.replace(/\/$/, ''), key, logs: () => logs }
}

const micros = (credits: number) => Math.round(credits * 1_000_000)

describe('tollgate demo', () => {
  let temp: string
  let demo: DemoProcess

  beforeAll(async () => {
    // The demo's own temporary directory goes here, so the test can see it deleted.
    temp = mkdtempSync(join(tmpdir(), 'tollgate-demo-test-'))
    // A real provider's credential in the environment: the demo must never serve its models.
    demo = await startDemo({ TMPDIR: temp, OPENAI_API_KEY: 'sk-demo-test-not-a-real-key' })
  }, 60_000)
  afterAll(() => {
    demo?.child.kill('SIGKILL')
    rmSync(temp, { recursive: true, force: true })
  })

  const wallet = async () => {
    const response = await fetch(`${demo.base}/v1/wallet`, { headers: { authorization: `Bearer ${demo.key}` } })
    expect(response.status).toBe(200)
    return ((await response.json()) as { balance: number; held: number }).balance
  }

  test('says what it is: an echo, not a model, on a fresh embedded database under the temp dir', () => {
    expect(demo.output).toContain('Provider:     demo-echo')
    expect(demo.output).toContain('It is not a model')
    expect(demo.output).toContain(`Database:     embedded, fresh in ${join(temp, 'tollgate-demo-')}`)
    expect(demo.output).toContain('wallet funded with 10 credits')
    expect(demo.output).toMatch(/^Admin token: +demo-admin-[0-9a-f]+ \(made up for this run\)$/m)
  })

  test('prints the console with the admin token it signs in with, and the console is there', async () => {
    const consoleUrl = demo.output.match(/^Console: +(\S+) \(sign in with the admin token below\)$/m)?.[1]
    expect(consoleUrl).toBe(`${demo.base}/console`)
    const page = await fetch(consoleUrl ?? '')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    // The token printed below it opens the admin API the console reads.
    const token = demo.output.match(/^Admin token: +(demo-admin-[0-9a-f]+) /m)?.[1]
    const accounts = await fetch(`${demo.base}/admin/v1/accounts`, { headers: { authorization: `Bearer ${token}` } })
    expect(accounts.status).toBe(200)
    expect(demo.output.indexOf('Console:')).toBeLessThan(demo.output.indexOf('Admin token:'))
  })

  test('the printed curl command makes a billed call, paid from the demo wallet to the micro-credit', async () => {
    const before = await wallet()
    expect(before).toBe(10)
    const curl = demo.output.match(/^curl -s \S+\/v1\/chat\/completions .*\\\n {2}-d .*$/m)?.[0]
    if (!curl) throw new Error(`no curl command in:\n${demo.output}`)
    const run = Bun.spawnSync(['bash', '-c', curl], { stdout: 'pipe', stderr: 'pipe' })
    expect(run.exitCode).toBe(0)
    const answer = JSON.parse(run.stdout.toString()) as {
      model: string
      choices: { message: { content: string } }[]
      usage: { prompt_tokens: number; completion_tokens: number; cost: number }
    }
    expect(answer.model).toBe('demo/echo')
    expect(answer.choices[0]?.message.content).toBe('echo: Hello, Tollgate')
    expect(answer.usage.cost).toBeGreaterThan(0)
    // The demo's made-up prices: 1000 credits per million input tokens, 2000 per million output tokens.
    expect(micros(answer.usage.cost)).toBe(answer.usage.prompt_tokens * 1000 + answer.usage.completion_tokens * 2000)
    expect(micros(await wallet())).toBe(micros(before) - micros(answer.usage.cost))
  })

  test('the official OpenAI SDK: a whole answer, a stream with usage, and the Responses API, each billed', async () => {
    const before = await wallet()
    const client = new OpenAI({ baseURL: `${demo.base}/v1`, apiKey: demo.key })

    const whole = await client.chat.completions.create({ model: 'demo/echo', messages: [{ role: 'user', content: 'from the SDK' }] })
    expect(whole.choices[0]?.message.content).toBe('echo: from the SDK')
    const wholeCost = (whole.usage as unknown as { cost: number }).cost

    const stream = await client.chat.completions.create({
      model: 'demo/echo',
      messages: [
        { role: 'system', content: 'ignored by the echo' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'echo: first' },
        { role: 'user', content: 'a streamed question' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    })
    let streamed = ''
    let streamCost = 0
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) streamCost = (chunk.usage as unknown as { cost: number }).cost
    }
    expect(streamed).toBe('echo: a streamed question')
    expect(streamCost).toBeGreaterThan(0)

    const response = await client.responses.create({ model: 'demo/echo', input: 'through responses' })
    expect(response.output_text).toBe('echo: through responses')
    const responseCost = (response.usage as unknown as { cost: number }).cost
    expect(responseCost).toBeGreaterThan(0)

    expect(micros(await wallet())).toBe(micros(before) - micros(wholeCost) - micros(streamCost) - micros(responseCost))
  })

  test('the official Anthropic SDK on /v1/messages with the bare name demo-echo', async () => {
    const before = await wallet()
    const client = new Anthropic({ baseURL: demo.base, apiKey: demo.key })
    const message = await client.messages.create({ model: 'demo-echo', max_tokens: 100, messages: [{ role: 'user', content: 'to messages' }] })
    expect(message.model).toBe('demo-echo')
    expect(message.content[0]?.type === 'text' ? message.content[0].text : undefined).toBe('echo: to messages')
    const cost = (message.usage as unknown as { cost: number }).cost
    expect(cost).toBeGreaterThan(0)
    expect(micros(await wallet())).toBe(micros(before) - micros(cost))
  })

  test('SIGHUP (a closing terminal sends it) keeps the demo catalogue: the key never reaches a real provider', async () => {
    const before = await wallet()
    demo.child.kill('SIGHUP')
    for (let waited = 0; !demo.logs().includes('config reloaded') && waited < 10_000; waited += 20) await Bun.sleep(20)
    const headers = { authorization: `Bearer ${demo.key}`, 'content-type': 'application/json' }
    const listed = (await (await fetch(`${demo.base}/v1/models`, { headers })).json()) as { data: { id: string }[] }
    const ids = listed.data.map((model) => model.id)
    expect(ids).toContain('demo/echo')
    expect(ids.filter((id) => id.startsWith('openai/'))).toEqual([])
    const answer = await fetch(`${demo.base}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'after the hang-up' }] }),
    })
    expect(answer.status).toBe(200)
    expect(((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('echo: after the hang-up')
    expect(await wallet()).toBeLessThan(before)
    expect(demo.output).not.toContain('WARNING')
  })

  test('stops on SIGTERM with exit code 0 and deletes its temporary data', async () => {
    expect(readdirSync(temp).filter((name) => name.startsWith('tollgate-demo-'))).toHaveLength(1)
    demo.child.kill('SIGTERM')
    expect(await demo.child.exited).toBe(0)
    expect(readdirSync(temp)).toEqual([])
  }, 30_000)
})

describe('tollgate demo stopped in a hurry', () => {
  test('a second Ctrl-C during the drain exits at once and still deletes the temporary data', async () => {
    const temp = mkdtempSync(join(tmpdir(), 'tollgate-demo-test-'))
    try {
      // A long drain: the first SIGINT starts it, the second cuts it short.
      const demo = await startDemo({ TMPDIR: temp, TOLLGATE_DRAIN_SECONDS: '60' })
      expect(readdirSync(temp).filter((name) => name.startsWith('tollgate-demo-'))).toHaveLength(1)
      demo.child.kill('SIGINT')
      for (let waited = 0; !demo.logs().includes('draining') && waited < 10_000; waited += 20) await Bun.sleep(20)
      expect(demo.logs()).toContain('draining')
      demo.child.kill('SIGINT')
      expect(await demo.child.exited).toBe(130)
      expect(demo.logs()).toContain('second signal during the drain')
      expect(readdirSync(temp)).toEqual([])
    } finally {
      rmSync(temp, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('tollgate demo on an operator-chosen data directory', () => {
  test('with TOLLGATE_DATA_DIR set, the demo keeps its data there and says so', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-demo-data-'))
    try {
      const demo = await startDemo({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ADMIN_TOKEN: 'operator-token' })
      expect(demo.output).toContain(`Database:     embedded, in ${dataDir} (TOLLGATE_DATA_DIR; kept after the demo stops)`)
      expect(demo.output).toContain('Admin token:  your TOLLGATE_ADMIN_TOKEN')
      expect(demo.output).not.toContain('operator-token')
      demo.child.kill('SIGTERM')
      expect(await demo.child.exited).toBe(0)
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('tollgate demo beyond loopback', () => {
  test('HOST other than loopback: a loud warning above the key', async () => {
    const demo = await startDemo({ HOST: '0.0.0.0' })
    try {
      const warning = demo.output.indexOf('!! WARNING: the demo listens on 0.0.0.0 (HOST), beyond this machine')
      expect(warning).toBeGreaterThan(-1)
      expect(warning).toBeLessThan(demo.output.indexOf('API key:'))
    } finally {
      demo.child.kill('SIGTERM')
      await demo.child.exited
    }
  }, 60_000)
})

describe('outside the demo', () => {
  test('tollgate serve has no demo model and no echo provider', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-serve-'))
    const adminToken = 'demo-test-admin-token'
    const gateway = await startGatewayProcess({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ADMIN_TOKEN: adminToken })
    try {
      const admin = (path: string, body: unknown) =>
        fetch(`${gateway.url}admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: JSON.stringify(body) }).then(
          (response) => response.json() as Promise<{ id: string; key: string }>,
        )
      const account = await admin('/accounts', { name: 'serve' })
      await admin(`/accounts/${account.id}/credits`, { amount: 1 })
      const { key } = await admin('/keys', { account_id: account.id, env: 'dev' })
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }

      const listed = (await (await fetch(`${gateway.url}v1/models`, { headers })).json()) as { data: { id: string }[] }
      expect(listed.data.map((model) => model.id).filter((id) => id.includes('demo'))).toEqual([])
      expect((await fetch(`${gateway.url}v1/models/demo/echo`, { headers })).status).toBe(404)
      const chat = await fetch(`${gateway.url}v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(chat.status).toBe(404)
      expect(((await chat.json()) as { error: { code: string } }).error.code).toBe('model_not_found')
      const messages = await fetch(`${gateway.url}v1/messages`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(messages.status).toBe(404)
    } finally {
      await gateway.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
