// The mock upstream of the tests, as its own process (docs/upstreams.md#openai-chat-completions). By default it answers at
// once with a short text; BENCH_STREAM_WORDS and BENCH_CHUNK_MS make every answer a long paced
// stream instead (one word per chunk, one chunk every M ms), for the streams scenario, and
// BENCH_DELAY_MS makes every answer wait that long first.
import { MockUpstream } from '../test/upstream/mock-upstream'

const words = Number(process.env.BENCH_STREAM_WORDS ?? 0)
const chunkDelayMs = Number(process.env.BENCH_CHUNK_MS ?? 0)
const delayMs = Number(process.env.BENCH_DELAY_MS ?? 0)
const text = words > 0 ? Array.from({ length: words }, (_, index) => `word${index}`).join(' ') : 'Hello! How can I assist you today?'
const upstream = new MockUpstream().start().always({
  text,
  usage: { prompt_tokens: 12, completion_tokens: words > 0 ? words : 9 },
  ...(chunkDelayMs > 0 ? { chunkDelayMs } : {}),
  ...(delayMs > 0 ? { delayMs } : {}),
})
// No per-request log: the benchmark sends hundreds of thousands.
upstream.keepRecords = false
console.log(JSON.stringify({ message: 'listening', url: upstream.baseUrl.replace(/v1$/, '') }))
