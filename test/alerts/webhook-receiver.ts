import { Webhook } from 'standardwebhooks'

/** One request the receiver got, its signature checked with the `standardwebhooks` package. */
export interface Receipt {
  id: string
  /** The attempt's `webhook-timestamp`. */
  timestamp: number
  verified: boolean
  type: string
  data: any
  /** What the receiver answered. */
  status: number
}

/**
 * A real HTTP receiver of webhook deliveries on loopback. `answer` decides each request's status
 * (by its order among every request received, from 1); it can also be stopped and started again
 * on the same port, so that attempts meet a refused connection.
 */
export class WebhookReceiver {
  readonly receipts: Receipt[] = []
  secret = ''
  answer: (attempt: number) => number = () => 200
  delayMs = 0
  private server: ReturnType<typeof Bun.serve> | undefined
  private port = 0

  start(): this {
    this.server = Bun.serve({
      hostname: '127.0.0.1',
      port: this.port,
      fetch: async (request) => {
        const body = await request.text()
        const headers = Object.fromEntries(request.headers)
        let verified = false
        try {
          new Webhook(this.secret).verify(body, headers)
          verified = true
        } catch {
          verified = false
        }
        const parsed = JSON.parse(body)
        if (this.delayMs > 0) await Bun.sleep(this.delayMs)
        const status = this.answer(this.receipts.length + 1)
        this.receipts.push({
          id: headers['webhook-id'] ?? '',
          timestamp: Number(headers['webhook-timestamp']),
          verified,
          type: parsed.type,
          data: parsed.data,
          status,
        })
        return new Response(status === 200 ? 'ok' : 'receiver says no', { status })
      },
    })
    this.port = this.server.port ?? 0
    return this
  }

  stop(): void {
    this.server?.stop(true)
    this.server = undefined
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`
  }

  /** Receipts answered 200, of one type. */
  delivered(type: string): Receipt[] {
    return this.receipts.filter((receipt) => receipt.status === 200 && receipt.type === type)
  }
}

/** Waits (at most `timeoutMs`) until `condition` holds, checking every few milliseconds. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
}
