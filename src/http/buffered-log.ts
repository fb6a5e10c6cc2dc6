import type { LogSink } from './request-log'

/**
 * Collects log lines and writes them in blocks: one write per line would cost a system call
 * per request. Lines wait at most `intervalMs`, and `flush` empties the buffer (at shutdown).
 */
export function bufferedLog(write: (block: string) => void, intervalMs = 50, maxBytes = 64 * 1024): LogSink & { flush(): void } {
  let lines: string[] = []
  let bytes = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (lines.length === 0) return
    const block = `${lines.join('\n')}\n`
    lines = []
    bytes = 0
    write(block)
  }
  const sink = (line: string) => {
    lines.push(line)
    bytes += line.length + 1
    if (bytes >= maxBytes) flush()
    else timer ??= setTimeout(flush, intervalMs)
  }
  return Object.assign(sink, { flush })
}
