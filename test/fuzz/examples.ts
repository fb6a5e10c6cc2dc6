/**
 * One valid request per route the app serves, the starting point of every mutation: a mutated
 * request is only interesting when its unmutated self gets through authentication and the
 * schema to the code behind them.
 */

export type Credential = 'key' | 'admin' | 'none'

export interface Example {
  /** The route as the router names it (`GET /v1/models/*`). */
  route: string
  method: string
  /** A concrete path, with ids filled in and the query string, when any. */
  path: string
  credential: Credential
  /** A JSON body, or a multipart form (`form`), or none. */
  json?: unknown
  form?: FormPart[]
}

export interface FormPart {
  name: string
  value: string | Uint8Array
  filename?: string
  contentType?: string
}

/** Ids the set-up created: the admin operations need things to point at. */
export interface FixtureIds {
  /** An account for admin operations to change; the funded account is kept out of their way. */
  adminAccountId: string
  /** A key the admin operations may revoke or fund. */
  adminKeyId: string
}

/** One second of 8 kHz, 8-bit mono silence: a WAV file the duration reader can measure. */
export function silentWav(seconds = 1): Uint8Array {
  const samples = 8000 * seconds
  const bytes = new Uint8Array(44 + samples)
  const view = new DataView(bytes.buffer)
  const ascii = (offset: number, text: string) => [...text].forEach((character, index) => view.setUint8(offset + index, character.charCodeAt(0)))
  ascii(0, 'RIFF')
  view.setUint32(4, 36 + samples, true)
  ascii(8, 'WAVE')
  ascii(12, 'fmt ')
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, 1, true) // mono
  view.setUint32(24, 8000, true)
  view.setUint32(28, 8000, true)
  view.setUint16(32, 1, true)
  view.setUint16(34, 8, true)
  ascii(36, 'data')
  view.setUint32(40, samples, true)
  bytes.fill(128, 44)
  return bytes
}

const chatMessages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello.' },
]
const messagesBody = {
  model: 'anthropic/claude-test',
  max_tokens: 50,
  system: 'Be brief.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'What is the weather?' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
  ],
  tools: [{ name: 'weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  temperature: 0.5,
}

export function examples(ids: FixtureIds): Example[] {
  const { max_tokens: _unused, ...countTokens } = messagesBody
  return [
    {
      route: 'POST /v1/chat/completions',
      method: 'POST',
      path: '/v1/chat/completions',
      credential: 'key',
      json: { model: 'test/cheap', messages: chatMessages, max_tokens: 20, temperature: 0.7, top_p: 0.9, stop: ['\n\n'], stream: false },
    },
    { route: 'POST /v1/messages', method: 'POST', path: '/v1/messages', credential: 'key', json: messagesBody },
    { route: 'POST /v1/messages/count_tokens', method: 'POST', path: '/v1/messages/count_tokens', credential: 'key', json: countTokens },
    {
      route: 'POST /v1/responses',
      method: 'POST',
      path: '/v1/responses',
      credential: 'key',
      json: { model: 'test/cheap', input: [{ role: 'user', content: 'Say hello.' }], instructions: 'Be brief.', max_output_tokens: 20 },
    },
    {
      route: 'POST /v1/embeddings',
      method: 'POST',
      path: '/v1/embeddings',
      credential: 'key',
      json: { model: 'test/embed', input: ['hello', 'world'], encoding_format: 'float' },
    },
    {
      route: 'POST /v1/images/generations',
      method: 'POST',
      path: '/v1/images/generations',
      credential: 'key',
      json: { model: 'test/image', prompt: 'a lighthouse', n: 1, size: '1024x1024' },
    },
    {
      route: 'POST /v1/audio/speech',
      method: 'POST',
      path: '/v1/audio/speech',
      credential: 'key',
      json: { model: 'test/tts', input: 'Hello there.', voice: 'alloy', response_format: 'mp3', speed: 1 },
    },
    {
      route: 'POST /v1/audio/transcriptions',
      method: 'POST',
      path: '/v1/audio/transcriptions',
      credential: 'key',
      form: [
        { name: 'file', value: silentWav(), filename: 'hello.wav', contentType: 'audio/wav' },
        { name: 'model', value: 'test/whisper' },
        { name: 'language', value: 'en' },
        { name: 'response_format', value: 'json' },
        { name: 'temperature', value: '0' },
      ],
    },
    {
      route: 'POST /v1/videos/generations',
      method: 'POST',
      path: '/v1/videos/generations',
      credential: 'key',
      json: { model: 'test/sora', prompt: 'a cat', seconds: 4, size: '1280x720' },
    },
    { route: 'GET /v1/models', method: 'GET', path: '/v1/models', credential: 'key' },
    { route: 'GET /v1/models/*', method: 'GET', path: '/v1/models/test/cheap', credential: 'key' },
    { route: 'GET /v1/models/coding', method: 'GET', path: '/v1/models/coding', credential: 'none' },
    { route: 'GET /v1/wallet', method: 'GET', path: '/v1/wallet', credential: 'key' },
    { route: 'GET /v1/usage', method: 'GET', path: '/v1/usage', credential: 'key' },
    { route: 'GET /v1/pricing', method: 'GET', path: '/v1/pricing', credential: 'key' },
    { route: 'GET /v1/healthz', method: 'GET', path: '/v1/healthz', credential: 'none' },
    { route: 'GET /v1/readyz', method: 'GET', path: '/v1/readyz', credential: 'none' },
    { route: 'GET /metrics', method: 'GET', path: '/metrics', credential: 'admin' },
    { route: 'GET /', method: 'GET', path: '/', credential: 'none' },
    { route: 'GET /api/hello', method: 'GET', path: '/api/hello', credential: 'none' },
    { route: 'GET /swagger', method: 'GET', path: '/swagger', credential: 'none' },
    { route: 'GET /swagger/json', method: 'GET', path: '/swagger/json', credential: 'none' },
    { route: 'POST /admin/v1/accounts', method: 'POST', path: '/admin/v1/accounts', credential: 'admin', json: { name: 'fuzzed account' } },
    { route: 'GET /admin/v1/accounts/:id', method: 'GET', path: `/admin/v1/accounts/${ids.adminAccountId}`, credential: 'admin' },
    {
      route: 'POST /admin/v1/accounts/:id/credits',
      method: 'POST',
      path: `/admin/v1/accounts/${ids.adminAccountId}/credits`,
      credential: 'admin',
      json: { amount: 1.5, idempotency_key: 'fuzz-grant', note: 'fuzz' },
    },
    {
      route: 'POST /admin/v1/keys',
      method: 'POST',
      path: '/admin/v1/keys',
      credential: 'admin',
      json: { account_id: ids.adminAccountId, env: 'dev', name: 'fuzz', scopes: ['chat'], allowed_models: ['test/cheap'], monthly_quota: 5, rpm: 100 },
    },
    { route: 'GET /admin/v1/keys/:id', method: 'GET', path: `/admin/v1/keys/${ids.adminKeyId}`, credential: 'admin' },
    { route: 'POST /admin/v1/keys/:id/revoke', method: 'POST', path: `/admin/v1/keys/${ids.adminKeyId}/revoke`, credential: 'admin' },
    {
      route: 'POST /admin/v1/keys/:id/allotment',
      method: 'POST',
      path: `/admin/v1/keys/${ids.adminKeyId}/allotment`,
      credential: 'admin',
      json: { amount: 2, idempotency_key: 'fuzz-allotment' },
    },
    {
      route: 'POST /admin/v1/users/credits',
      method: 'POST',
      path: '/admin/v1/users/credits',
      credential: 'admin',
      json: { iss: 'https://issuer.example', sub: 'user-1', amount: 3 },
    },
    {
      route: 'GET /admin/v1/users/allotment',
      method: 'GET',
      path: '/admin/v1/users/allotment?iss=https%3A%2F%2Fissuer.example&sub=user-1',
      credential: 'admin',
    },
    {
      route: 'POST /admin/v1/custom-models',
      method: 'POST',
      path: '/admin/v1/custom-models',
      credential: 'admin',
      json: { account_id: ids.adminAccountId, name: 'fuzz-model', base_model: 'test/cheap', system: 'Be brief.', defaults: { temperature: 0.2 } },
    },
    {
      route: 'GET /admin/v1/usage',
      method: 'GET',
      path: `/admin/v1/usage?group_by=day,key,model&account_id=${ids.adminAccountId}&since=2026-01&limit=5`,
      credential: 'admin',
    },
    { route: 'GET /admin/v1/ledger', method: 'GET', path: `/admin/v1/ledger?account_id=${ids.adminAccountId}&limit=5`, credential: 'admin' },
    { route: 'GET /admin/v1/accounts', method: 'GET', path: '/admin/v1/accounts?limit=5', credential: 'admin' },
    { route: 'GET /admin/v1/keys', method: 'GET', path: `/admin/v1/keys?account_id=${ids.adminAccountId}&limit=5`, credential: 'admin' },
    { route: 'GET /admin/v1/users', method: 'GET', path: '/admin/v1/users?limit=5', credential: 'admin' },
    {
      route: 'PATCH /admin/v1/keys/:id',
      method: 'PATCH',
      path: `/admin/v1/keys/${ids.adminKeyId}`,
      credential: 'admin',
      json: { name: 'fuzz edited', rpm: 100, allowed_models: ['test/*'], expires_at: null },
    },
  ]
}
