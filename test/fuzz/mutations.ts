import type { Example, FormPart } from './examples'
import type { Random } from './prng'

/**
 * The mutation families: each takes a valid example and breaks it one way. A family's name is
 * what the summary and a known-finding list refer to, so names stay stable.
 */
export const FAMILIES = [
  'valid',
  'stream',
  'type-swap',
  'edge-number',
  'deep-nesting',
  'huge-array',
  'huge-string',
  'control-chars',
  'unpaired-surrogate',
  'invalid-utf8',
  'broken-json',
  'content-type',
  'multipart',
  'field-drop',
  'odd-keys',
  'method',
  'odd-headers',
  'odd-path',
  'raw-http',
] as const
export type Family = (typeof FAMILIES)[number]

/** One request as sent: `raw` requests go over a bare socket, for what fetch refuses to send. */
export interface FuzzRequest {
  index: number
  family: Family
  route: string
  method: string
  path: string
  headers: [string, string][]
  body: Uint8Array | undefined
  transport: 'fetch' | 'raw'
  /** What was done, in a few words. */
  note: string
}

export interface Secrets {
  key: string
  adminToken: string
}

const encoder = new TextEncoder()

/** Tokens that JSON.stringify cannot write: numbers past float range, bare NaN, lone-surrogate escapes. */
const EDGE_NUMBERS = [
  '1e308',
  '-1e308',
  '1e309',
  '-0',
  '0',
  '-1',
  '0.5',
  '1e-400',
  '9007199254740993',
  '-9007199254740993',
  '123456789012345678901234567890',
  '4294967296',
  '2147483648',
  '"NaN"',
  '"Infinity"',
  '"-Infinity"',
  '"1e308"',
  '"-0"',
  '"0x10"',
  '" 7 "',
  'NaN',
  'Infinity',
  '1.0000000000000000000001',
  '1E+2',
  '00012',
]
const CONTROL_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u0003',
  '\u001b[31mred',
  '\u007f',
  '\r\n',
  '\u2028\u2029',
  '\ufeff',
  '\uffff',
  '\u200b',
  'tollgate_sk_prod_\u0000',
  '%00',
  '../../etc/passwd',
]
const SURROGATE_TOKENS = ['"\\ud800"', '"\\udfff"', '"a\\ud83db"', '"\\udc00\\ud800"', '"\\ud83d"']
const OTHER_VALUES: unknown[] = [null, true, false, 0, -1, '', 'x', [], {}, [null], { '': null }, [[]], 'test/cheap', 'anthropic/claude-test']
const ODD_KEYS = ['__proto__', 'constructor', 'prototype', '', ' ', '\u0000', 'toString', 'hasOwnProperty', 'a'.repeat(10_000), '$ref', 'model\u0000']

type JsonPath = (string | number)[]

function allPaths(value: unknown, path: JsonPath = [], into: JsonPath[] = []): JsonPath[] {
  into.push(path)
  if (Array.isArray(value)) value.forEach((item, index) => allPaths(item, [...path, index], into))
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) allPaths(item, [...path, key], into)
  return into
}

/** A copy of `value` with the node at `path` replaced (or removed, with `remove`). */
function replaced(value: unknown, path: JsonPath, next: unknown, remove = false): unknown {
  if (path.length === 0) return next
  const [head, ...rest] = path
  if (Array.isArray(value)) {
    const copy = [...value]
    if (rest.length === 0 && remove) copy.splice(head as number, 1)
    else copy[head as number] = replaced(copy[head as number], rest, next, remove)
    return copy
  }
  const copy = { ...(value as Record<string, unknown>) }
  if (rest.length === 0 && remove) delete copy[head as string]
  else copy[head as string] = replaced(copy[head as string], rest, next, remove)
  return copy
}

/**
 * JSON text for `value` where the marker strings are swapped for raw tokens, so a body can
 * hold what JSON.stringify never writes (1e309, NaN, "\ud800", 100 000 nested brackets).
 */
function withRaw(value: unknown, raw: string[]): string {
  let text = JSON.stringify(value)
  raw.forEach((token, index) => (text = text.replace(JSON.stringify(`@@RAW${index}@@`), token)))
  return text
}

const marker = (index: number) => `@@RAW${index}@@`

function nested(random: Random, depth: number): string {
  const open = random.chance(0.5) ? '[' : '{"a":'
  const close = open === '[' ? ']' : '}'
  return open.repeat(depth) + (random.chance(0.5) ? '1' : '"x"') + close.repeat(depth)
}

function credentialHeaders(example: Example, secrets: Secrets): [string, string][] {
  if (example.credential === 'key') return [['authorization', `Bearer ${secrets.key}`]]
  if (example.credential === 'admin') return [['authorization', `Bearer ${secrets.adminToken}`]]
  return []
}

export function multipartBody(parts: FormPart[], boundary: string): Uint8Array {
  const chunks: Uint8Array[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`
    const head = `--${boundary}\r\ncontent-disposition: ${disposition}\r\n${part.contentType ? `content-type: ${part.contentType}\r\n` : ''}\r\n`
    chunks.push(encoder.encode(head), typeof part.value === 'string' ? encoder.encode(part.value) : part.value, encoder.encode('\r\n'))
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

/** The example as a valid request: JSON or multipart body, credential, content type. */
function baseline(index: number, example: Example, secrets: Secrets): FuzzRequest {
  const headers = credentialHeaders(example, secrets)
  let body: Uint8Array | undefined
  if (example.json !== undefined) {
    body = encoder.encode(JSON.stringify(example.json))
    headers.push(['content-type', 'application/json'])
  } else if (example.form) {
    body = multipartBody(example.form, 'fuzzboundary')
    headers.push(['content-type', 'multipart/form-data; boundary=fuzzboundary'])
  }
  return { index, family: 'valid', route: example.route, method: example.method, path: example.path, headers, body, transport: 'fetch', note: 'as the example' }
}

function jsonBody(request: FuzzRequest, text: string): FuzzRequest {
  const headers = request.headers.filter(([name]) => name !== 'content-type')
  headers.push(['content-type', 'application/json'])
  return { ...request, headers, body: encoder.encode(text) }
}

/** The example's JSON, or for a form or a body-less route, a stand-in object to break. */
function jsonOf(example: Example): unknown {
  if (example.json !== undefined) return example.json
  if (example.form) return Object.fromEntries(example.form.filter((part) => typeof part.value === 'string').map((part) => [part.name, part.value]))
  return {}
}

export function mutate(random: Random, index: number, example: Example, secrets: Secrets, family: Family): FuzzRequest {
  const request = mutateOnce(random, index, example, secrets, family)
  // fetch will not send a body with GET or HEAD; a bare socket will, and the gateway must cope.
  const bodyless = request.method.toUpperCase() === 'GET' || request.method.toUpperCase() === 'HEAD'
  return bodyless && request.body && request.transport === 'fetch' ? { ...request, transport: 'raw' } : request
}

function mutateOnce(random: Random, index: number, example: Example, secrets: Secrets, family: Family): FuzzRequest {
  const request = { ...baseline(index, example, secrets), family }
  const json = jsonOf(example)
  const paths = allPaths(json)
  const somePath = () => random.pick(paths.length > 1 ? paths.slice(1) : paths)
  const describe = (path: JsonPath) => (path.length ? path.join('.') : '(root)')

  switch (family) {
    case 'valid':
      return request
    case 'stream': {
      const streamed =
        typeof json === 'object' && json !== null && !Array.isArray(json) ? { ...json, stream: true, stream_options: { include_usage: true } } : json
      return { ...jsonBody(request, JSON.stringify(streamed)), note: 'stream: true' }
    }
    case 'type-swap': {
      const path = somePath()
      const value = random.pick(OTHER_VALUES)
      return { ...jsonBody(request, JSON.stringify(replaced(json, path, value))), note: `${describe(path)} = ${JSON.stringify(value)}` }
    }
    case 'edge-number': {
      const path = somePath()
      const token = random.pick(EDGE_NUMBERS)
      return { ...jsonBody(request, withRaw(replaced(json, path, marker(0)), [token])), note: `${describe(path)} = ${token}` }
    }
    case 'deep-nesting': {
      const depth = random.pick([64, 1000, 10_000, 100_000, 500_000])
      const path = somePath()
      return { ...jsonBody(request, withRaw(replaced(json, path, marker(0)), [nested(random, depth)])), note: `${describe(path)} nested ${depth} deep` }
    }
    case 'huge-array': {
      const length = random.pick([1000, 100_000, 1_000_000])
      const path = somePath()
      const element = random.pick(['0', '{}', '"x"', '{"role":"user","content":"hi"}', '[]'])
      return {
        ...jsonBody(request, withRaw(replaced(json, path, marker(0)), [`[${Array(length).fill(element).join(',')}]`])),
        note: `${describe(path)} = array of ${length} × ${element}`,
      }
    }
    case 'huge-string': {
      const length = random.pick([100_000, 5_000_000, 20_000_000])
      const path = somePath()
      return {
        ...jsonBody(request, JSON.stringify(replaced(json, path, random.pick(['a', '\u00e9', '\ud83d\ude00', ' ']).repeat(length)))),
        note: `${describe(path)} = string of ${length}`,
      }
    }
    case 'control-chars': {
      const strings = paths.filter((path) => typeof path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key as string], json) === 'string')
      const path = strings.length ? random.pick(strings) : somePath()
      const inserted = random.pick(CONTROL_STRINGS)
      const original = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key as string], json)
      const value = typeof original === 'string' && random.chance(0.5) ? original + inserted : inserted
      return { ...jsonBody(request, JSON.stringify(replaced(json, path, value))), note: `${describe(path)} = ${JSON.stringify(value)}` }
    }
    case 'unpaired-surrogate': {
      const path = somePath()
      const token = random.pick(SURROGATE_TOKENS)
      return { ...jsonBody(request, withRaw(replaced(json, path, marker(0)), [token])), note: `${describe(path)} = ${token}` }
    }
    case 'invalid-utf8': {
      const text = encoder.encode(JSON.stringify(json))
      const bad = random.pick([[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0xfe, 0xff]])
      // Inside a string literal, where a decoder has to make sense of it: just after a quote.
      const quotes = [...text.keys()].filter((position) => text[position] === 0x22)
      const at = quotes.length ? random.pick(quotes) + 1 : 0
      const body = Buffer.concat([text.subarray(0, at), Uint8Array.from(bad), text.subarray(at)])
      return { ...jsonBody(request, ''), body, note: `bytes ${bad.map((byte) => byte.toString(16)).join(' ')} at ${at}` }
    }
    case 'broken-json': {
      const text = JSON.stringify(json)
      const broken = random.pick([
        () => text.slice(0, random.int(0, Math.max(0, text.length - 1))),
        () => `${text} trailing`,
        () => `\ufeff${text}`,
        () => text.replace('{', '{"model":1,'),
        () => '',
        () => 'null',
        () => '[]',
        () => '1',
        () => '"text"',
        () => '{"a":1,}',
        () => "{'model': 'x'}",
        () => text.replaceAll('"', "'"),
        () => `${text}${text}`,
      ])()
      return { ...jsonBody(request, broken), note: `body ${JSON.stringify(broken.slice(0, 80))}` }
    }
    case 'content-type': {
      const type = random.pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        'multipart/form-data; boundary=',
        'application/json; charset=utf-16',
        'application/octet-stream',
        'application/xml',
        'application/json, text/plain',
        '',
        'application/jsonx',
        'APPLICATION/JSON',
        'application/json; boundary=x',
        'image/png',
      ])
      const headers = request.headers.filter(([name]) => name !== 'content-type')
      if (type) headers.push(['content-type', type])
      const body = request.body ?? encoder.encode(JSON.stringify(json))
      return {
        ...request,
        headers,
        body,
        transport: request.method === 'GET' || request.method === 'HEAD' ? 'raw' : 'fetch',
        note: `content-type ${JSON.stringify(type)}`,
      }
    }
    case 'multipart':
      return multipartAbuse(random, request, example)
    case 'field-drop': {
      const path = somePath()
      return { ...jsonBody(request, JSON.stringify(replaced(json, path, undefined, true))), note: `without ${describe(path)}` }
    }
    case 'odd-keys': {
      const key = random.pick(ODD_KEYS)
      const path = random.pick(
        paths
          .filter((candidate) => {
            const node = candidate.reduce<unknown>((value, part) => (value as Record<string, unknown>)[part as string], json)
            return node !== null && typeof node === 'object' && !Array.isArray(node)
          })
          .concat([[]]),
      )
      const node = path.reduce<unknown>((value, part) => (value as Record<string, unknown>)[part as string], json) as Record<string, unknown>
      const value = random.pick([{ admin: true }, null, 'x', 1, []])
      // Built as text: an object literal would set the prototype for "__proto__" instead of a key.
      const inner = JSON.stringify(node ?? {}).replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value)}${Object.keys(node ?? {}).length ? ',' : ''}`)
      return { ...jsonBody(request, withRaw(replaced(json, path, marker(0)), [inner])), note: `${describe(path)} gets key ${JSON.stringify(key.slice(0, 20))}` }
    }
    case 'method': {
      const method = random.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'FOO', 'get', 'POST '])
      const viaFetch = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'].includes(method)
      const bodyless = method === 'GET' || method === 'HEAD'
      return { ...request, method, transport: viaFetch && !(bodyless && request.body) ? 'fetch' : 'raw', note: `method ${JSON.stringify(method)}` }
    }
    case 'odd-headers':
      return oddHeaders(random, request, secrets)
    case 'odd-path':
      return oddPath(random, request)
    case 'raw-http':
      return rawHttp(random, request)
  }
}

function multipartAbuse(random: Random, request: FuzzRequest, example: Example): FuzzRequest {
  const parts: FormPart[] =
    example.form ??
    Object.entries((example.json ?? {}) as Record<string, unknown>).map(([name, value]) => ({
      name,
      value: typeof value === 'string' ? value : JSON.stringify(value),
    }))
  const boundary = `fuzz${random.int(0, 1e6)}`
  const headers = request.headers.filter(([name]) => name !== 'content-type')
  const withType = (type: string, body: Uint8Array, note: string): FuzzRequest => ({ ...request, headers: [...headers, ['content-type', type]], body, note })
  const form = `multipart/form-data; boundary=${boundary}`
  const variants: (() => FuzzRequest)[] = [
    () => withType(form, multipartBody(parts, boundary), 'a form where JSON is expected (or a valid form)'),
    () => withType('multipart/form-data', multipartBody(parts, boundary), 'no boundary parameter'),
    () => withType(`${form}x`, multipartBody(parts, boundary), 'boundary mismatch'),
    () => withType(form, multipartBody(parts, boundary).subarray(0, random.int(10, 200)), 'truncated form'),
    () =>
      withType(
        form,
        multipartBody([...Array.from({ length: 5000 }, (_, at): FormPart => ({ name: `f${at}`, value: 'x' })), ...parts], boundary),
        '5000 extra parts',
      ),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) => (part.name === 'file' ? { name: 'file', value: 'not a file' } : part)),
          boundary,
        ),
        'file as a text field',
      ),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) => (part.name === 'model' ? { ...part, filename: 'model.txt', contentType: 'text/plain' } : part)),
          boundary,
        ),
        'model as a file',
      ),
    () => withType(form, multipartBody([...parts, ...parts], boundary), 'every field twice'),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) =>
            part.filename ? { ...part, filename: random.pick(['a\u0000b.wav', '../../../etc/passwd', 'x'.repeat(5000), 'a"b.wav', 'é.wav', '']) } : part,
          ),
          boundary,
        ),
        'odd filename',
      ),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) => (part.filename ? { ...part, value: new Uint8Array(0) } : part)),
          boundary,
        ),
        'empty file',
      ),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) => (part.filename ? { ...part, value: Uint8Array.from({ length: 4096 }, (_, at) => (at * 7919) & 0xff) } : part)),
          boundary,
        ),
        'file of noise',
      ),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) =>
            part.filename ? { ...part, contentType: random.pick(['', 'audio/x\u0001', 'text/html', 'multipart/mixed; boundary=y']) } : part,
          ),
          boundary,
        ),
        'odd part type',
      ),
    () => withType(form, encoder.encode(`--${boundary}\r\ncontent-disposition: form-data\r\n\r\nvalue\r\n--${boundary}--\r\n`), 'part without a name'),
    () => withType(form, encoder.encode(`--${boundary}\r\ngarbage header line\r\n--${boundary}--`), 'part headers never end'),
    () => withType(form, encoder.encode(`--${boundary}--\r\n`), 'empty form'),
    () => withType(form, Buffer.concat([multipartBody(parts, boundary), Uint8Array.from([0xff, 0xfe, 0x00])]), 'bytes after the closing boundary'),
    () => withType(`multipart/form-data; boundary="${'b'.repeat(200)}"`, multipartBody(parts, 'b'.repeat(200)), 'over-long boundary'),
    () =>
      withType(
        form,
        multipartBody(
          parts.map((part) =>
            part.name === 'temperature' || part.name === 'model'
              ? { ...part, value: random.pick(['1e308', 'NaN', '-0', '\u0000', '9007199254740993', '']) }
              : part,
          ),
          boundary,
        ),
        'odd field values',
      ),
  ]
  return { ...random.pick(variants)(), family: 'multipart' }
}

function oddHeaders(random: Random, request: FuzzRequest, secrets: Secrets): FuzzRequest {
  const others = request.headers.filter(([name]) => name !== 'authorization')
  const credential = request.headers.find(([name]) => name === 'authorization')?.[1].slice('Bearer '.length) ?? secrets.key
  const variants: [[string, string][], string, boolean][] = [
    [[...others, ['authorization', 'Bearer']], 'Bearer without a credential', false],
    [[...others, ['authorization', 'Bearer ']], 'Bearer and a space', false],
    [[...others, ['authorization', `bearer ${credential}`]], 'lower-case scheme', false],
    [[...others, ['authorization', `Bearer  ${credential} `]], 'extra spaces', false],
    [[...others, ['authorization', `Basic ${btoa(`user:${credential}`)}`]], 'Basic scheme', false],
    [[...others, ['authorization', `Bearer ${credential.slice(0, -1)}`]], 'credential one character short', false],
    [[...others, ['authorization', `Bearer ${credential}x`]], 'credential one character long', false],
    [[...others, ['authorization', `Bearer ${credential}\u0001`]], 'control character after the credential', true],
    [[...others, ['authorization', `Bearer ${credential}\u0000`]], 'NUL after the credential', true],
    [[...others, ['authorization', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.']], 'unsigned JWT', false],
    [[...others, ['authorization', `Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.${btoa('{"sub":"a","exp":1e308}')}.c2ln`]], 'JWT-shaped with exp 1e308', false],
    [[...others, ['authorization', `Bearer ${'A'.repeat(8000)}`]], '8000-character credential', false],
    [[...others, ['authorization', 'Bearer tollgate_sk_prod_']], 'key prefix only', false],
    [[...others, ['authorization', `Bearer tollgate_sk_prod_${'\u00e9'.repeat(10)}`]], 'latin-1 bytes in the key', false],
    [[...others, ['x-api-key', credential]], 'x-api-key instead of Bearer', false],
    [[...request.headers, ['x-api-key', 'tollgate_sk_prod_wrong']], 'a wrong x-api-key besides Bearer', false],
    [[...request.headers, ['authorization', 'Bearer tollgate_sk_prod_wrong']], 'two authorization headers', true],
    [[...request.headers, ['anthropic-version', random.pick(['', '9999-99-99', '\u0000', 'x'.repeat(1000)])]], 'odd anthropic-version', true],
    [[...request.headers, ['accept', random.pick(['text/event-stream', 'application/xml', '*/*;q=NaN', ''])]], 'odd accept', false],
    [[...request.headers, ['content-encoding', random.pick(['gzip', 'br', 'deflate', 'zstd', 'identity, gzip'])]], 'content-encoding on a plain body', false],
    [[...request.headers, ['transfer-encoding', 'chunked']], 'chunked framing claimed, not used', true],
    [[...request.headers, ['content-length', String(random.pick([0, 1, 10 ** 12, -1]))]], 'content-length lie', true],
    [[...request.headers, ['expect', '100-continue']], 'expect 100-continue', true],
    [[...request.headers, ...Array.from({ length: 200 }, (_, at) => [`x-fuzz-${at}`, 'v'] as [string, string])], '200 extra headers', false],
    [[...request.headers, ['x-big', 'v'.repeat(20_000)]], '20 kB header', false],
    [[...request.headers, ['x-request-id', 'req_\u0000injected']], 'client x-request-id with NUL', true],
    [[...request.headers, ['host', random.pick(['', 'a b', 'evil.example:99999', '[::1'])]], 'odd host', true],
  ]
  const [headers, note, raw] = random.pick(variants)
  return { ...request, headers, note, transport: raw || ((request.method === 'GET' || request.method === 'HEAD') && request.body) ? 'raw' : 'fetch' }
}

function oddPath(random: Random, request: FuzzRequest): FuzzRequest {
  const [pathname, query = ''] = request.path.split('?')
  const segments = pathname!.split('/')
  const weird = random.pick([
    '%00',
    'a%00b',
    '%2e%2e',
    '..%2F..%2Fadmin',
    'x'.repeat(5000),
    '%ff%fe',
    '%zz',
    '%F0%9F%92%A5',
    'acct%0d%0aX',
    '%20',
    '',
    '*',
    '%2F',
    '..',
    '.',
    'null',
    'undefined',
    '__proto__',
    '1e308',
    '-0',
  ])
  const variants: (() => [string, string])[] = [
    () => {
      const at = random.int(1, segments.length - 1)
      return [[...segments.slice(0, at), weird, ...segments.slice(at + 1)].join('/') + (query ? `?${query}` : ''), `segment ${at} = ${weird.slice(0, 30)}`]
    },
    () => [`${pathname}/${weird}${query ? `?${query}` : ''}`, `appended ${weird.slice(0, 30)}`],
    () => [`${pathname}/`, 'trailing slash'],
    () => [`/${pathname}`, 'double leading slash'],
    () => [pathname!.toUpperCase(), 'upper case'],
    () => [`${pathname}?${query}&${query}`, 'query repeated'],
    () => {
      const value = random.pick(['1e308', '-0', 'NaN', '9007199254740993', '%00', '', '-1', '0', 'x'.repeat(3000), '%ff'])
      const name = random.pick(['limit', 'account_id', 'key_id', 'iss', 'sub', 'user_sub', 'request_id', 'model', 'cursor'])
      return [`${pathname}?${query ? `${query}&` : ''}${name}=${value}`, `query ${name}=${value.slice(0, 30)}`]
    },
    () => [`${pathname}#fragment`, 'fragment'],
    () => [`${pathname};param=1`, 'matrix parameter'],
  ]
  const [path, note] = random.pick(variants)()
  // fetch would normalise dot segments and reject some bytes: odd paths go raw.
  return { ...request, path, note, transport: 'raw' }
}

function rawHttp(random: Random, request: FuzzRequest): FuzzRequest {
  const note = random.pick([
    'HTTP/1.0',
    'body longer than content-length',
    'body shorter than content-length',
    'bad chunked framing',
    'both content-length and chunked',
    'header without colon',
    'obs-fold continuation',
    'NUL in header name',
  ])
  return { ...request, transport: 'raw', note: `raw: ${note}` }
}
