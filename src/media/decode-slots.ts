import { ServiceUnavailableError } from '../errors/kinds'

/**
 * A small semaphore for image decodes: at most `limit` run at once, at most `maxWaiting` wait
 * for a turn, and none waits longer than `waitMs`. A decode that finds the queue full, or whose
 * wait runs out, is 503 service_unavailable with Retry-After: memory and CPU stay bounded however
 * many images arrive together.
 */
export class DecodeSlots {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(
    readonly limit: number,
    readonly maxWaiting: number,
    readonly waitMs: number,
  ) {}

  /** Decodes running now and waiting for a turn. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length }
  }

  /** Runs `work` in a slot, once one is free. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire()
    try {
      return await work()
    } finally {
      this.release()
    }
  }

  private async acquire(): Promise<void> {
    if (this.running < this.limit) {
      this.running++
      return
    }
    if (this.waiting.length >= this.maxWaiting) throw busy()
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(grant)
        if (index >= 0) this.waiting.splice(index, 1)
        reject(busy())
      }, this.waitMs)
      this.waiting.push(grant)
    })
  }

  /** Hands the slot to the next waiter, if any; the running count stays as it is then. */
  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}

function busy(): ServiceUnavailableError {
  return new ServiceUnavailableError('The gateway is already decoding as many images as it allows; try again shortly.', { retryAfterSeconds: 5 })
}
