import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { transcriptionHoldSeconds } from '../../src/billing/audio-duration'
import { estimateTextTokens } from '../../src/billing/estimator'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { TRANSCRIPT } from '../upstream/openai-media'

/**
 * A transcription is billed its audio minutes at `audioMinute`: the duration the answer reports,
 * else the duration the gateway read from the file to size the hold (docs/billing.md). A model
 * priced by the minute only (as whisper-1) is never charged 0 for an answer that reports none:
 * text, srt and vtt never do, and json only sometimes.
 */
const AUDIO = `${import.meta.dir}/../fixtures/audio/mp3-cbr.mp3`
/** A reported duration apart from the file's 5 s (and within the hold), so the test tells which one was billed. */
const REPORTED_SECONDS = 2
/** audioMinute 0.006 credits: 6,000 micro-credits a minute, 100 a second. */
const MICROS_PER_MINUTE = 6000

/** Micro-credits for `seconds` at the test price, rounded up to the micro-credit as pricing does. */
const minuteMicros = (seconds: number) => Math.ceil((Math.ceil(seconds * 1000) * MICROS_PER_MINUTE) / 60_000)

type Format = 'json' | 'text' | 'srt' | 'vtt' | 'verbose_json'

interface Case {
  format: Format
  /** What the mock answer reports: a number of seconds, null for none (verbose_json), undefined for the format's default of none. */
  reported: number | null | undefined
  /** Whether the answer reports a duration the gateway should bill. */
  reportsDuration: boolean
}

const CASES: Case[] = [
  { format: 'json', reported: undefined, reportsDuration: false },
  { format: 'json', reported: REPORTED_SECONDS, reportsDuration: true },
  { format: 'verbose_json', reported: null, reportsDuration: false },
  { format: 'verbose_json', reported: REPORTED_SECONDS, reportsDuration: true },
  { format: 'text', reported: undefined, reportsDuration: false },
  { format: 'srt', reported: undefined, reportsDuration: false },
  { format: 'vtt', reported: undefined, reportsDuration: false },
]

for (const kind of testDatabases) {
  describe(`transcription billing (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    let audio: Uint8Array<ArrayBuffer>
    let measured: number
    beforeAll(async () => {
      audio = await Bun.file(AUDIO).bytes()
      measured = await transcriptionHoldSeconds(new Blob([audio]))
    })
    beforeEach(() => suite.upstream.reset())

    /** Transcribes the fixture as `format`; returns the status, the charge entry and the cost the answer shows (JSON formats). */
    async function transcribe(model: string, format: Format) {
      const { key, id: keyId } = await suite.harness.key()
      const body = new FormData()
      body.append('model', model)
      body.append('file', new File([audio], 'speech.mp3', { type: 'audio/mpeg' }))
      body.append('response_format', format)
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', headers: bearer(key), body }),
      )
      const text = await response.text()
      const entries = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as {
        kind: string
        amount: number
        usage: Record<string, unknown>
      }[]
      const charge = entries.find((entry) => entry.kind === 'charge')
      if (!charge) throw new Error(`no charge: ${JSON.stringify(entries)}`)
      const shownCost = format.includes('json') ? (JSON.parse(text) as { usage: { cost: number } }).usage.cost : undefined
      return { status: response.status, text, charge, shownCost }
    }

    test('the fixture is read as about 5 seconds', () => {
      expect(measured).toBeGreaterThan(5)
      expect(measured).toBeLessThan(5.2)
    })

    for (const { format, reported, reportsDuration } of CASES) {
      test(`${format}, ${reportsDuration ? `reporting ${reported} s` : 'reporting no duration'}: billed the ${reportsDuration ? 'reported' : 'measured'} minutes`, async () => {
        suite.upstream.script({ ...(reported === undefined ? {} : { audioSeconds: reported }) })
        const { status, text, charge, shownCost } = await transcribe('test/whisper-minutes', format)
        expect(status).toBe(200)
        expect(text).toContain(TRANSCRIPT)
        const seconds = reportsDuration ? REPORTED_SECONDS : measured
        expect(Math.round(charge.amount * 1e6)).toBe(minuteMicros(seconds))
        expect(charge.usage).toMatchObject({ audio_seconds: seconds, audio_source: reportsDuration ? 'provider' : 'measured' })
        if (shownCost !== undefined) expect(shownCost).toBe(charge.amount)
      })
    }

    test('a model with a transcript price bills the transcript and the measured minutes of a text answer', async () => {
      const { charge } = await transcribe('test/whisper', 'text')
      const tokenMicros = Math.ceil(estimateTextTokens(TRANSCRIPT) * 10)
      expect(Math.round(charge.amount * 1e6)).toBe(tokenMicros + minuteMicros(measured))
      expect(charge.usage).toMatchObject({ source: 'estimate', audio_source: 'measured' })
    })
  })
}
