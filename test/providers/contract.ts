import { describe, expect, test } from 'bun:test'
import type { Answer, StreamPart } from '../../src/canonical/answer'
import type { Prompt } from '../../src/canonical/prompt'
import type { Usage } from '../../src/canonical/usage'
import type { VideoOutcome, VideoRequest } from '../../src/canonical/video'
import type { GatewayError } from '../../src/errors/gateway-error'
import { UpstreamError } from '../../src/errors/kinds'
import type { MediaPath, MessagesPassthrough, NativeBody, ProviderAdapter, UpstreamTarget } from '../../src/providers/adapter'
import type { ProviderConfig, ProviderConfigProblem } from '../../src/providers/provider-config'
import { createAdapters, type ProviderApi } from '../../src/providers/registry'
import { translatedParts } from '../support/sse-events'
import { fakeFetch, type RecordedRequest } from './fake-fetch'
import { chunkedStream, fieldOf, fixtureJson, fixtureText, jsonResponse, sseBody } from './fixtures'

/**
 * One contract every provider adapter is held to, run once per adapter (as Hono runs one router
 * suite per router): each capability group the adapter has is driven over a fake fetch and
 * recorded wire fixtures, from request encoding to decoding, usage, error mapping and
 * malformed payloads. A group the adapter lacks is a stated skip, and the list of groups is
 * itself asserted against the adapter.
 */

export const CAPABILITIES = ['chat', 'messages', 'responses', 'generateContent', 'translate', 'embeddings', 'media', 'video'] as const
export type Capability = (typeof CAPABILITIES)[number]

/** What the upstream must have received. Headers are a subset; the JSON body, when given, is compared whole. */
export interface ExpectedRequest {
  url: string
  method?: string
  headers: Record<string, string>
  absentHeaders?: string[]
  body?: unknown
  /** A multipart body's text fields. */
  form?: Record<string, string>
}

export interface TranslateContract {
  prompt: Prompt
  request: ExpectedRequest
  /** The same prompt, streamed: the URL and headers. */
  streamRequest: ExpectedRequest
  answer: { fixture: string; expected: Answer }
  /** Stream fixtures and the canonical parts each decodes to, the last one `finish`. */
  streams: { fixture: string; expected: StreamPart[] }[]
  /** A stream fixture in which the upstream reports an error after it started. */
  streamError: string
  malformedAnswers: [label: string, body: unknown][]
  /** Streams (raw wire text) that break the format. */
  malformedStreams: [label: string, text: string][]
}

export interface NativeContract {
  body: NativeBody
  passthrough?: MessagesPassthrough
  request: ExpectedRequest
  /** The answer fixture whose `usage` object is converted. */
  usage: { fixture: string; field: string; expected: Usage }
  /** A count field of the usage object: present but not a number, it must come out NaN. */
  countField: string
}

export interface EmbeddingsContract {
  texts: string[]
  dimensions: number | undefined
  request: ExpectedRequest
  answer: { fixture: string; expected: number[][] }
  malformed: [label: string, body: unknown][]
}

export interface MediaContract {
  cases: { path: MediaPath; body: () => BodyInit; request: ExpectedRequest }[]
}

export interface VideoContract {
  request: VideoRequest
  /** The upstream's responses in order: submit, polls, and (where there is one) the clip download. */
  finished: () => Response[]
  requests: ExpectedRequest[]
  jobId: string
  outcome: VideoOutcome
  blocked: { responses: () => Response[]; reason: string }
  malformed: () => Response[]
  cancel: null | { request: ExpectedRequest; refused: { response: () => Response; status: number; code: string } }
}

export interface ErrorCase {
  status: number
  fixture: string
  expected: { upstreamError: boolean; status: number; code: string; message?: string }
}

export interface ConfigContract {
  invalid: { change: Partial<ProviderConfig>; problems: ProviderConfigProblem[] }[]
}

export interface ProviderContract {
  api: ProviderApi
  provider: ProviderConfig
  /** The groups this adapter has, and for each one it lacks, why. */
  groups: Capability[]
  absent: Partial<Record<Capability, string>>
  translate?: TranslateContract
  chat?: NativeContract
  messages?: NativeContract
  responses?: NativeContract
  generateContent?: NativeContract
  embeddings?: EmbeddingsContract
  media?: MediaContract
  video?: VideoContract
  errors: ErrorCase[]
  config: ConfigContract
}

/** A provider entry as config.ts resolves one, with short timings for tests. */
export function providerConfig(entry: Partial<ProviderConfig> & Pick<ProviderConfig, 'api' | 'baseUrl'>): ProviderConfig {
  return {
    name: 'test-provider',
    credential: 'test-key',
    serviceAccount: undefined,
    configured: true,
    pollIntervalMs: 0,
    timeoutMs: 1000,
    jobTimeoutMs: 1000,
    streamIdleTimeoutMs: 1000,
    cooldownSeconds: 30,
    ...entry,
  }
}

export function runProviderContract(contract: ProviderContract): void {
  const setUp = () => {
    const fake = fakeFetch()
    return { fake, adapter: createAdapters(fake.fetch)[contract.api] }
  }
  // Every request below carries the target's extra headers (a trace's `traceparent`); expectRequest checks each one has them.
  const target = (): UpstreamTarget => ({ provider: contract.provider, model: 'model-x', signal: new AbortController().signal, headers: { ...EXTRA_HEADERS } })

  describe(`${contract.api} adapter contract`, () => {
    test('has exactly the capability groups its table lists', () => {
      const { adapter } = setUp()
      expect(CAPABILITIES.filter((name) => adapter[name] !== undefined)).toEqual(contract.groups)
      // Every group is stated one way or the other: present, or absent with a reason.
      for (const name of CAPABILITIES) expect(contract.groups.includes(name) !== (contract.absent[name] !== undefined)).toBe(true)
    })

    for (const name of CAPABILITIES) {
      if (!contract.groups.includes(name)) test.skip(`${name}: not offered (${contract.absent[name] ?? 'no reason given'})`, () => {})
    }

    if (contract.translate) describeTranslate(contract.api, contract.translate, setUp, target)
    for (const name of ['chat', 'messages', 'responses', 'generateContent'] as const) {
      const native = contract[name]
      if (native) describeNative(name, contract.api, native, setUp, target)
    }
    if (contract.embeddings) describeEmbeddings(contract.embeddings, contract.api, setUp, target)
    if (contract.media) describeMedia(contract.media, setUp, target)
    if (contract.video) describeVideo(contract.video, setUp, target)

    describe('error mapping', () => {
      for (const { status, fixture, expected } of contract.errors) {
        test(`HTTP ${status} with ${fixture}.json`, () => {
          const { adapter } = setUp()
          const error = adapter.mapError(status, fixtureText(contract.api, `${fixture}.json`))
          expect(error instanceof UpstreamError).toBe(expected.upstreamError)
          expect(error.status).toBe(expected.status)
          expect(error.code).toBe(expected.code)
          if (expected.message) expect(error.message).toBe(expected.message)
          // The upstream's body is kept for the logs, never lost.
          expect(error.cause).toBe(fixtureText(contract.api, `${fixture}.json`))
        })
      }
      test('a body that is not the envelope still maps by status', () => {
        const { adapter } = setUp()
        const clientFault = adapter.mapError(400, '<html>bad gateway page</html>')
        expect(clientFault.status).toBe(400)
        expect(clientFault.code).toBe('upstream_error')
        expect(adapter.mapError(503, 'not json')).toBeInstanceOf(UpstreamError)
      })
    })

    describe('config', () => {
      test('a well-formed entry has no problems', () => {
        expect(setUp().adapter.checkConfig(contract.provider)).toEqual([])
      })
      for (const { change, problems } of contract.config.invalid) {
        test(`an entry with ${JSON.stringify(change)} is refused`, () => {
          expect(setUp().adapter.checkConfig({ ...contract.provider, ...change })).toEqual(problems)
        })
      }
    })
  })
}

type SetUp = () => { fake: ReturnType<typeof fakeFetch>; adapter: ProviderAdapter }

function group<K extends Capability>(adapter: ProviderAdapter, name: K): NonNullable<ProviderAdapter[K]> {
  const found = adapter[name]
  if (found === undefined || found === null) throw new Error(`the adapter has no ${name} group`)
  return found
}

function describeTranslate(api: ProviderApi, spec: TranslateContract, setUp: SetUp, target: () => UpstreamTarget): void {
  describe('translate', () => {
    test('request encoding: the canonical prompt in the API format, to its URL, with the provider key', async () => {
      const { fake, adapter } = setUp()
      fake.answer(jsonResponse(api, spec.answer.fixture))
      const response = await group(adapter, 'translate').send(target(), spec.prompt)
      expect(response.status).toBe(200)
      expectRequest(fake.only(), spec.request)
    })

    test('request encoding: a streamed prompt goes to the streaming URL', async () => {
      const { fake, adapter } = setUp()
      fake.answer(new Response(sseBody(api, spec.streams[0]?.fixture ?? '')))
      await group(adapter, 'translate').send(target(), { ...spec.prompt, stream: true })
      expectRequest(fake.only(), spec.streamRequest)
    })

    test('answer decoding: a whole answer becomes the canonical answer', () => {
      const { adapter } = setUp()
      expect(group(adapter, 'translate').readAnswer(fixtureJson(api, spec.answer.fixture))).toEqual(spec.answer.expected)
    })

    for (const stream of spec.streams) {
      test(`stream decoding: ${stream.fixture}.sse becomes canonical parts ending in finish with usage`, async () => {
        const { adapter } = setUp()
        const parts = await translatedParts(group(adapter, 'translate').readStream(), sseBody(api, stream.fixture))
        expect(parts).toEqual(stream.expected)
        const last = parts.at(-1)
        expect(last?.type).toBe('finish')
        expect(last?.type === 'finish' ? last.usage : undefined).toBeDefined()
      })
    }

    test('stream decoding: an error the upstream reports mid-stream is an UpstreamError', async () => {
      const { adapter } = setUp()
      await expectUpstreamErrorAsync(() => translatedParts(group(adapter, 'translate').readStream(), sseBody(api, spec.streamError)))
    })

    test('stream decoding: a stream cut before its end is an UpstreamError, not a quiet finish', async () => {
      const { adapter } = setUp()
      const [first] = spec.streams
      const text = fixtureText(api, `${first?.fixture}.sse`)
      // The first two events only: started, never finished.
      const events = text.split(/\r?\n\r?\n/).filter((event) => event.trim() !== '')
      await expectUpstreamErrorAsync(() => translatedParts(group(adapter, 'translate').readStream(), chunkedStream(`${events.slice(0, 2).join('\n\n')}\n\n`)))
    })

    for (const [label, body] of spec.malformedAnswers) {
      test(`malformed answer: ${label}`, () => {
        const { adapter } = setUp()
        expectUpstreamError(() => group(adapter, 'translate').readAnswer(body))
      })
    }

    for (const [label, text] of spec.malformedStreams) {
      test(`malformed stream: ${label}`, async () => {
        const { adapter } = setUp()
        await expectUpstreamErrorAsync(() => translatedParts(group(adapter, 'translate').readStream(), chunkedStream(text)))
      })
    }
  })
}

function describeNative(
  name: 'chat' | 'messages' | 'responses' | 'generateContent',
  api: ProviderApi,
  spec: NativeContract,
  setUp: SetUp,
  target: () => UpstreamTarget,
): void {
  const send = (adapter: ProviderAdapter, body: NativeBody) =>
    name === 'messages'
      ? group(adapter, 'messages').send(target(), body, spec.passthrough ?? { version: null, beta: null, query: '' })
      : name === 'generateContent'
        ? group(adapter, 'generateContent').send(target(), body, false)
        : group(adapter, name).send(target(), body)
  const usage = (adapter: ProviderAdapter, reported: unknown) => group(adapter, name).usage(reported)

  describe(name, () => {
    test('request encoding: the body passes through with the route model, premium options stripped', async () => {
      const { fake, adapter } = setUp()
      fake.answer(new Response('{}'))
      await send(adapter, spec.body)
      expectRequest(fake.only(), spec.request)
    })

    test('usage conversion: the reported usage in canonical units', () => {
      const { adapter } = setUp()
      const reported = fieldOf(fixtureJson(api, spec.usage.fixture), spec.usage.field)
      expect(usage(adapter, reported)).toEqual(spec.usage.expected)
    })

    test('usage conversion: absent usage is undefined', () => {
      const { adapter } = setUp()
      expect(usage(adapter, undefined)).toBeUndefined()
      expect(usage(adapter, null)).toBeUndefined()
      expect(usage(adapter, {})).toBeUndefined()
    })

    test('usage conversion: a count that is present but not a number becomes NaN, for billing to refuse', () => {
      const { adapter } = setUp()
      const reported = fieldOf(fixtureJson(api, spec.usage.fixture), spec.usage.field)
      const lying = { ...(typeof reported === 'object' ? reported : {}), [spec.countField]: '12' }
      const converted = usage(adapter, lying)
      expect(converted).toBeDefined()
      expect(Object.values(converted ?? {}).some(Number.isNaN)).toBe(true)
    })

    test('usage conversion: a usage that is not an object is an UpstreamError', () => {
      const { adapter } = setUp()
      expectUpstreamError(() => usage(adapter, 'lots'))
      expectUpstreamError(() => usage(adapter, [1, 2]))
    })
  })
}

function describeEmbeddings(spec: EmbeddingsContract, api: ProviderApi, setUp: SetUp, target: () => UpstreamTarget): void {
  describe('embeddings', () => {
    test('request encoding: every text, in order, to the API embedding endpoint', async () => {
      const { fake, adapter } = setUp()
      fake.answer(jsonResponse(api, spec.answer.fixture))
      await group(adapter, 'embeddings').send(target(), spec.texts, spec.dimensions)
      expectRequest(fake.only(), spec.request)
    })
    test('answer decoding: the vectors in input order', () => {
      expect(group(setUp().adapter, 'embeddings').readVectors(fixtureJson(api, spec.answer.fixture))).toEqual(spec.answer.expected)
    })
    for (const [label, body] of spec.malformed) {
      test(`malformed answer: ${label}`, () => {
        const { adapter } = setUp()
        expectUpstreamError(() => group(adapter, 'embeddings').readVectors(body))
      })
    }
  })
}

function describeMedia(spec: MediaContract, setUp: SetUp, target: () => UpstreamTarget): void {
  describe('media', () => {
    for (const media of spec.cases) {
      test(`request encoding: ${media.path} goes as given, with the provider key`, async () => {
        const { fake, adapter } = setUp()
        fake.answer(new Response('{}'))
        await group(adapter, 'media').send(target(), media.path, media.body())
        expectRequest(fake.only(), media.request)
      })
    }
  })
}

function describeVideo(spec: VideoContract, setUp: SetUp, target: () => UpstreamTarget): void {
  describe('video', () => {
    test('generate: submits, names the job, polls until done, and returns the clip', async () => {
      const { fake, adapter } = setUp()
      fake.answer(...spec.finished())
      const started: string[] = []
      const outcome = await group(adapter, 'video').generate(target(), spec.request, (id) => started.push(id))
      expect(started).toEqual([spec.jobId])
      expect(outcome).toEqual(spec.outcome)
      expect(fake.requests.length).toBe(spec.requests.length)
      spec.requests.forEach((expected, index) => {
        const request = fake.requests[index]
        if (!request) throw new Error(`no request ${index}`)
        expectRequest(request, expected)
      })
    })

    test('generate: a clip withheld by safety checks is a block, not an error', async () => {
      const { fake, adapter } = setUp()
      fake.answer(...spec.blocked.responses())
      expect(await group(adapter, 'video').generate(target(), spec.request, () => {})).toEqual({ kind: 'blocked', reason: spec.blocked.reason })
    })

    test('generate: a malformed job status is an UpstreamError', async () => {
      const { fake, adapter } = setUp()
      fake.answer(...spec.malformed())
      await expectUpstreamErrorAsync(() => group(adapter, 'video').generate(target(), spec.request, () => {}))
    })

    const cancel = spec.cancel
    if (cancel === null) {
      test('cancel: null, as the API has no way to stop a job', () => {
        expect(group(setUp().adapter, 'video').cancel).toBeNull()
      })
    } else {
      test('cancel: asks the API to stop the job and resolves once it confirmed', async () => {
        const { fake, adapter } = setUp()
        fake.answer(new Response('{}'))
        const stop = group(adapter, 'video').cancel
        expect(stop).not.toBeNull()
        await stop?.(target(), spec.jobId)
        expectRequest(fake.only(), cancel.request)
      })
      test('cancel: a refusal rejects with the mapped error', async () => {
        const { fake, adapter } = setUp()
        fake.answer(cancel.refused.response())
        const error = await captureAsync(async () => group(adapter, 'video').cancel?.(target(), spec.jobId))
        expect(error).toMatchObject({ status: cancel.refused.status, code: cancel.refused.code })
      })
    }
  })
}

/** What the gateway adds to an upstream call: every request the adapter makes for it must carry these. */
const EXTRA_HEADERS = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }

function expectRequest(recorded: RecordedRequest, expected: ExpectedRequest): void {
  expect(recorded.method).toBe(expected.method ?? 'POST')
  expect(recorded.url).toBe(expected.url)
  expect(recorded.headers).toMatchObject(expected.headers)
  expect(recorded.headers).toMatchObject(EXTRA_HEADERS)
  for (const name of expected.absentHeaders ?? []) expect(recorded.headers[name]).toBeUndefined()
  expect(recorded.signal).toBeDefined()
  if (expected.body !== undefined) {
    expect(typeof recorded.body).toBe('string')
    expect(typeof recorded.body === 'string' ? JSON.parse(recorded.body) : undefined).toEqual(expected.body)
  }
  if (expected.form) {
    const form = recorded.body
    expect(form).toBeInstanceOf(FormData)
    if (form instanceof FormData) for (const [field, value] of Object.entries(expected.form)) expect(form.get(field)).toBe(value)
  }
}

/** The error must be an UpstreamError with a short message that names no `undefined` or NaN. */
function expectCleanUpstreamError(error: unknown): void {
  expect(error).toBeInstanceOf(UpstreamError)
  const message = error instanceof Error ? error.message : ''
  expect(message.length).toBeGreaterThan(0)
  expect(message.length).toBeLessThan(200)
  expect(message).not.toContain('undefined')
  expect(message).not.toContain('NaN')
}

function expectUpstreamError(run: () => unknown): void {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  expectCleanUpstreamError(caught)
}

async function captureAsync(run: () => Promise<unknown>): Promise<GatewayError | unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  return undefined
}

async function expectUpstreamErrorAsync(run: () => Promise<unknown>): Promise<void> {
  expectCleanUpstreamError(await captureAsync(run))
}
