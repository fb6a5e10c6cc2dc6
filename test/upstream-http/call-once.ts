// One call through the own client in a process of its own, for the tests whose setting Bun reads
// only at start (NODE_EXTRA_CA_CERTS) or from the environment (proxies): prints what came back.
import { createUpstreamClient, rawBodyOf } from '../../src/upstream-http/client'
import { readPulled } from './servers'

const [url = '', method = 'POST'] = process.argv.slice(2)
const client = createUpstreamClient({ connectTimeoutMs: 3000 })
try {
  const response = await client.fetch(url, { method, ...(method === 'POST' ? { body: '{"hello":1}', headers: { 'content-type': 'application/json' } } : {}) })
  const pulled = rawBodyOf(response)
  const text = pulled ? await readPulled(pulled) : await response.text()
  console.log(JSON.stringify({ status: response.status, text, pulled: pulled !== undefined }))
} catch (error) {
  console.log(JSON.stringify({ error: (error as { code?: string }).code ?? String(error), name: (error as Error).name }))
} finally {
  client.close()
}
