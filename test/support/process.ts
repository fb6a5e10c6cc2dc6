/** A gateway running as its own process, as operators run it. */
export interface GatewayProcess {
  url: string
  child: ReturnType<typeof Bun.spawn>
  stop(signal?: NodeJS.Signals): Promise<number>
}

/** Starts `command` (the gateway) on a free port and waits for its "listening" line. */
export async function startProcess(command: string[], env: Record<string, string>, cwd?: string): Promise<GatewayProcess> {
  const child = Bun.spawn(command, {
    cwd,
    // No load balancer watches a test's gateway: SIGTERM need not wait out a drain window.
    // On Postgres a test's gateway runs two workers unless the test says otherwise, so every
    // process test also covers work spread over processes (one is the default in production).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      TOLLGATE_DRAIN_SECONDS: '0',
      ...(env.DATABASE_URL ? { TOLLGATE_WORKERS: '2' } : {}),
      ...env,
    },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const url = await listeningUrl(child.stdout)
  return {
    url,
    child,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      child.kill(signal)
      return child.exited
    },
  }
}

/** `bun src/main.ts` with the given environment. */
export function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  return startProcess(['bun', 'src/main.ts'], env)
}

/**
 * Reads stdout until the "listening" line and returns its URL. The rest is drained in the
 * background: a closed pipe would make every later log line fail.
 */
async function listeningUrl(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader()
  const decoder = new TextDecoder()
  let seen = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the gateway exited without listening:\n${seen}`)
    seen += decoder.decode(value, { stream: true })
    const line = seen.split('\n').find((candidate) => candidate.includes('"listening"'))
    if (line) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return JSON.parse(line).url
    }
  }
}
