import { beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { bearer, type Reply } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectRollupMatchesLedger } from '../support/ledger-checks'

const hi = [{ role: 'user', content: 'Say hi.' }]

/**
 * A call's session, from the header its client names it in, is on every ledger entry of the
 * call, and the ledger and usage summaries select and group by it (docs/billing.md#attribution).
 */
for (const database of testDatabases) {
  for (const leases of [false, true]) {
    describe(`session attribution (${database.kind}, ${leases ? 'credit leases' : 'exact holds'})`, () => {
      const suite = gatewaySuite(database, { env: leases ? { TOLLGATE_CREDIT_LEASE: undefined } : {} })
      const upstream = suite.upstream
      beforeEach(() => upstream.reset())

      /** The call's ledger entries as [kind, session_id], oldest first, once its charge is written (a leased call's after its answer). */
      async function entriesOf(reply: Reply): Promise<[string, string | null][]> {
        expect(reply.status).toBe(200)
        const deadline = Date.now() + 5000
        for (;;) {
          const entries = (await suite.harness.admin('GET', `/ledger?request_id=${reply.headers.get('x-request-id')}`)).json.data
          if (entries.some((entry: { kind: string }) => entry.kind === 'charge') || Date.now() > deadline) {
            return entries.reverse().map((entry: { kind: string; session_id: string | null }) => [entry.kind, entry.session_id])
          }
          await Bun.sleep(10)
        }
      }

      const messages = (key: string, headers: Record<string, string>) =>
        suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key, ...headers }, body: { model: 'claude-test', max_tokens: 100, messages: hi } })
      const responses = (key: string, headers: Record<string, string>) =>
        suite.harness.call('POST', '/v1/responses', { headers: { ...bearer(key), ...headers }, body: { model: 'test/smart', input: 'Say hi.' } })
      const chat = (key: string, headers: Record<string, string>) =>
        suite.harness.call('POST', '/v1/chat/completions', { headers: { ...bearer(key), ...headers }, body: { model: 'test/cheap', messages: hi } })

      /** Leased calls write only their charge; exact holds a hold, a charge and a release. */
      const callEntries = (session: string | null): [string, string | null][] =>
        leases
          ? [['charge', session]]
          : [
              ['hold', session],
              ['charge', session],
              ['release', session],
            ]

      test("Claude Code's, Codex's and the generic header each name the call's session on its entries", async () => {
        const { key } = await suite.harness.key()
        const claudeCode = crypto.randomUUID()
        const codex = `codex-${crypto.randomUUID()}`
        expect(await entriesOf(await messages(key, { 'x-claude-code-session-id': claudeCode }))).toEqual(callEntries(claudeCode))
        expect(await entriesOf(await responses(key, { session_id: codex }))).toEqual(callEntries(codex))
        expect(await entriesOf(await chat(key, { 'x-session-id': 'build-42' }))).toEqual(callEntries('build-42'))
        expect(await entriesOf(await chat(key, {}))).toEqual(callEntries(null))
      })

      test('the first present header counts; a value that is not a session id is ignored, never refused', async () => {
        const { key } = await suite.harness.key()
        const all = { 'x-claude-code-session-id': 'first', session_id: 'second', 'x-session-id': 'third' }
        expect(await entriesOf(await chat(key, all))).toEqual(callEntries('first'))
        expect(await entriesOf(await chat(key, { session_id: 'second', 'x-session-id': 'third' }))).toEqual(callEntries('second'))
        expect(await entriesOf(await chat(key, { 'session-id': 'codex-thread', 'x-session-id': 'third' }))).toEqual(callEntries('codex-thread'))
        expect(await entriesOf(await chat(key, { 'x-session-id': 'x'.repeat(128) }))).toEqual(callEntries('x'.repeat(128)))
        for (const bad of ['', 'x'.repeat(129), 'two words', 'tab\there']) {
          expect(await entriesOf(await chat(key, { 'x-session-id': bad }))).toEqual(callEntries(null))
        }
        // A bad first header is not passed over for a later one: the client named its session, badly.
        expect(await entriesOf(await chat(key, { 'x-claude-code-session-id': 'x'.repeat(129), 'x-session-id': 'later' }))).toEqual(callEntries(null))
      })

      test('the ledger and usage summaries select by session_id; usage groups by session', async () => {
        const { id: keyId, key } = await suite.harness.key()
        const session = crypto.randomUUID()
        upstream.script(
          { usage: { prompt_tokens: 10, completion_tokens: 5 } },
          { usage: { prompt_tokens: 20, completion_tokens: 5 } },
          { usage: { prompt_tokens: 40, completion_tokens: 5 } },
        )
        const sessions: Record<string, string>[] = [{ 'x-session-id': session }, { 'x-session-id': session }, {}]
        for (const headers of sessions) await entriesOf(await chat(key, headers))
        const ledger = (await suite.harness.admin('GET', `/ledger?session_id=${session}&kind=charge`)).json.data
        expect(ledger.map((entry: { usage: { input_tokens: number } }) => entry.usage.input_tokens)).toEqual([20, 10])
        expect((await suite.harness.admin('GET', `/ledger?session_id=${session}`)).json.data).toHaveLength(leases ? 2 : 6)

        const bySession = (await suite.harness.admin('GET', `/usage?group_by=day,session&key_id=${keyId}`)).json.data
        expect(
          bySession.map((row: { session_id: string | null; requests: number; input_tokens: number }) => [row.session_id, row.requests, row.input_tokens]),
        ).toEqual(
          // Byte order, descending: a session id before null (stored as '').
          [
            [session, 2, 30],
            [null, 1, 40],
          ],
        )
        const selected = (await suite.harness.admin('GET', `/usage?group_by=day&session_id=${session}`)).json.data
        expect(selected).toHaveLength(1)
        expect(selected[0]).toMatchObject({ requests: 2, input_tokens: 30 })
        expect(selected[0]).not.toHaveProperty('session_id')
        const csv = await suite.harness.admin('GET', `/usage?group_by=day,key,session&key_id=${keyId}&format=csv`)
        expect(csv.text.split(/\r?\n/)[0]).toBe(
          'period,key_id,session_id,requests,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,cache_write_1h_tokens,cost,uncollected',
        )
        await expectRollupMatchesLedger(suite.database.db)
      })

      test('session_id out of bounds is a 400 on the usage summary; group_by names session once', async () => {
        const usage = await suite.harness.admin('GET', `/usage?session_id=${'x'.repeat(129)}`)
        expect(usage.status).toBe(400)
        const twice = await suite.harness.admin('GET', '/usage?group_by=day,session,session')
        expect({ status: twice.status, param: twice.json.error.param }).toEqual({ status: 400, param: 'group_by' })
      })
    })
  }
}
