import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { openDatabase } from '../../src/db/client'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { expectBooksBalance } from '../support/ledger-checks'
import { mockCatalogEnv } from '../support/mock-catalog'
import { startGatewayProcess } from '../support/process'

/**
 * Bun's fetch runs 256 requests at once unless BUN_CONFIG_MAX_HTTP_REQUESTS says otherwise, and
 * it reads that only when the runtime starts. The gateway process sets it for itself (by
 * re-executing, see src/http/upstream-concurrency.ts): more than 256 streams must be open
 * upstream at the same moment.
 *
 * Sizes: each stream costs a socket on each side of each hop, about 2 × 600 descriptors in this
 * process and as many in the gateway; `ulimit -n` is checked first. The clients speak HTTP/1.1
 * over raw sockets because this test process's own fetch is held to 256 as well.
 */
const STREAMS = Number(process.env.TOLLGATE_CAPACITY_STREAMS ?? 600)
const PER_STREAM_USAGE = { prompt_tokens: 10, completion_tokens: 5 }
// test/cheap costs 1 credit per million input tokens and 2 per million output tokens.
const PER_STREAM_MICROS = PER_STREAM_USAGE.prompt_tokens * 1 + PER_STREAM_USAGE.completion_tokens * 2

/** An OpenAI chat upstream whose streams send their first chunk, then wait for `release()`. */
class HoldingUpstream {
  open = 0
  mostOpen = 0
  private releaseAll: () => void = () => {}
  private readonly released = new Promise<void>((resolve) => (this.releaseAll = resolve))
  private readonly server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: (request) => this.handle(request) })

  get baseUrl(): string {
    return `http://127.0.0.1:${this.server.port}/v1`
  }

  release(): void {
    this.releaseAll()
  }

  stop(): void {
    this.server.stop(true)
  }

  private async handle(request: Request): Promise<Response> {
    const body = (await request.json()) as { model: string }
    const encoder = new TextEncoder()
    const chunk = (payload: object) =>
      encoder.encode(`data: ${JSON.stringify({ id: 'chatcmpl-held', object: 'chat.completion.chunk', created: 1, model: body.model, ...payload })}\n\n`)
    this.open++
    this.mostOpen = Math.max(this.mostOpen, this.open)
    const released = this.released
    const upstream = this
    return new Response(
      new ReadableStream({
        async start(controller) {
          controller.enqueue(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }))
          await released
          controller.enqueue(chunk({ choices: [{ index: 0, delta: { content: 'held open' }, finish_reason: null }] }))
          controller.enqueue(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }))
          controller.enqueue(chunk({ choices: [], usage: { ...PER_STREAM_USAGE, total_tokens: 15 } }))
          controller.enqueue(encoder.encode('data: [DONE]\n\n'))
          controller.close()
          upstream.open--
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )
  }
}

/** One HTTP/1.1 request on its own socket; resolves with everything the server sent once it closes. */
function rawPost(origin: URL, path: string, headers: Record<string, string>, body: string): Promise<string> {
  const payload = Buffer.from(body)
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: ${origin.host}`,
    'connection: close',
    `content-length: ${payload.length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ]
  return new Promise((resolve, reject) => {
    const received: Buffer[] = []
    Bun.connect({
      hostname: origin.hostname,
      port: Number(origin.port),
      socket: {
        open(socket) {
          socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), payload]))
        },
        data(_socket, data) {
          received.push(Buffer.from(data))
        },
        close() {
          resolve(Buffer.concat(received).toString())
        },
        error(_socket, error) {
          reject(error)
        },
      },
    }).catch(reject)
  })
}

function descriptorLimit(): number {
  const result = Bun.spawnSync(['sh', '-c', 'ulimit -n'])
  const text = result.stdout.toString().trim()
  return text === 'unlimited' ? Number.POSITIVE_INFINITY : Number(text)
}

describe('upstream capacity of one gateway process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-capacity-'))
  const upstream = new HoldingUpstream()
  afterAll(() => {
    upstream.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  beforeAll(() => {
    // Both processes hold ~2 sockets per stream, plus the runtime's own descriptors.
    const limit = descriptorLimit()
    if (limit < STREAMS * 2 + 200) throw new Error(`ulimit -n is ${limit}; this test needs about ${STREAMS * 2 + 200} (raise it with ulimit -n)`)
  })

  test(
    `${STREAMS} streams are open upstream at the same time, then settle exactly`,
    async () => {
      const env = { ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl), TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN }
      const gateway = await startGatewayProcess(env)
      let stopped = false
      try {
        const admin = async (path: string, payload: unknown) => {
          const response = await fetch(`${gateway.url}admin/v1${path}`, { method: 'POST', headers: bearer(ADMIN_TOKEN), body: JSON.stringify(payload) })
          return (await response.json()) as Record<string, string>
        }
        const account = await admin('/accounts', { name: 'capacity' })
        await admin(`/accounts/${account.id}/credits`, { amount: 10 })
        const { key } = await admin('/keys', { account_id: account.id, env: 'prod' })

        const origin = new URL(gateway.url)
        const request = JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hold' }], stream: true, max_tokens: 10 })
        const answers = Array.from({ length: STREAMS }, () =>
          rawPost(origin, '/v1/chat/completions', { ...bearer(key!), 'content-type': 'application/json' }, request),
        )

        // Each hold is a commit on the embedded database (a few hundred a second here): time grows with the count.
        const deadline = Date.now() + 20_000 + STREAMS * 10
        while (upstream.open < STREAMS && Date.now() < deadline) await Bun.sleep(50)
        const openAtOnce = upstream.mostOpen
        upstream.release()
        const texts = await Promise.all(answers)
        console.log(`upstream capacity: ${openAtOnce} of ${STREAMS} streams open upstream at once`)
        expect(openAtOnce).toBe(STREAMS)
        expect(texts.filter((text) => text.startsWith('HTTP/1.1 200') && text.includes('data: [DONE]')).length).toBe(STREAMS)

        // The books, read from the gateway's own database once it has stopped and let it go.
        expect(await gateway.stop()).toBe(0)
        stopped = true
        const database = await openDatabase({ dataDir })
        try {
          await expectBooksBalance(database.db)
          const [wallet] = await database.rows<{ balance: string; held: string }>(
            sql`select balance::text as balance, held::text as held from wallets where kind = 'wallet' and owner_id = ${account.id}`,
          )
          expect(wallet).toEqual({ balance: String(10_000_000 - STREAMS * PER_STREAM_MICROS), held: '0' })
        } finally {
          await database.close()
        }
      } finally {
        if (!stopped) await gateway.stop()
      }
    },
    Math.max(60_000, STREAMS * 30),
  )
})
