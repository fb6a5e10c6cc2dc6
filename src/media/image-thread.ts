import { ServiceUnavailableError } from '../errors/kinds'
import { type CoverJob, isCoverResult } from './cover-job'

/** The image could not be decoded: the caller's file, not the gateway, is at fault. */
export class UnreadableImageError extends Error {}

interface Pending {
  resolve: (png: Uint8Array<ArrayBuffer>) => void
  reject: (error: Error) => void
  timer: ReturnType<typeof setTimeout>
}

/**
 * The Bun Worker that decodes images (image-worker.ts), started on the first job and kept for
 * the next. A job that outlasts `deadlineMs`, or a thread that fails, ends the thread; its jobs
 * fail with 503 and the next job starts a new one. The thread never keeps the process alive.
 */
export class ImageThread {
  private worker: Worker | undefined
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  /** Threads started so far. */
  started = 0

  constructor(
    private readonly entry: URL,
    private readonly deadlineMs: number,
  ) {}

  /** `data` scaled and centre-cropped to `width` x `height`, as PNG, decoded on the thread. */
  cover(data: Uint8Array, width: number, height: number): Promise<Uint8Array<ArrayBuffer>> {
    const worker = this.thread()
    const id = this.nextId++
    // A copy of its own: it is moved to the thread, and `data` may share its buffer with others.
    const job: CoverJob = { id, data: new Uint8Array(data), width, height }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new ServiceUnavailableError('An image took too long to decode.')), this.deadlineMs)
      this.pending.set(id, { resolve, reject, timer })
      worker.postMessage(job, [job.data.buffer])
    })
  }

  close(): void {
    this.fail(new ServiceUnavailableError('The image thread stopped.'))
  }

  private thread(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(this.entry, { ref: false })
    worker.onmessage = (event: MessageEvent) => this.settle(event.data)
    worker.onerror = (event: ErrorEvent) => this.fail(new ServiceUnavailableError('The image thread failed.', { cause: event.message }))
    // A thread that exits on its own fails its jobs now rather than at their deadline.
    worker.addEventListener('close', () => {
      if (this.worker === worker) this.fail(new ServiceUnavailableError('The image thread stopped.'))
    })
    this.worker = worker
    this.started++
    return worker
  }

  private settle(result: unknown): void {
    if (!isCoverResult(result)) return
    const pending = this.pending.get(result.id)
    if (!pending) return
    this.pending.delete(result.id)
    clearTimeout(pending.timer)
    if (result.ok) pending.resolve(new Uint8Array(result.png))
    else pending.reject(result.unreadable ? new UnreadableImageError(result.message) : new Error(result.message))
  }

  /** Ends the thread and fails every job it had. */
  private fail(error: Error): void {
    this.worker?.terminate()
    this.worker = undefined
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer)
      pending.reject(error)
    }
    this.pending.clear()
  }
}
