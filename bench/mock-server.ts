// The mock upstream of the tests, as its own process, answering at once (WIRE.md §2).
import { MockUpstream } from '../test/upstream/mock-upstream'

const upstream = new MockUpstream().start().always({ text: 'Hello! How can I assist you today?', usage: { prompt_tokens: 12, completion_tokens: 9 } })
// No per-request log: the benchmark sends hundreds of thousands.
upstream.keepRecords = false
console.log(JSON.stringify({ message: 'listening', url: upstream.baseUrl.replace(/v1$/, '') }))
