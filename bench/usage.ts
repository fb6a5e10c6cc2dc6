// The usage-summary scenario of `bun run bench` (also `bun bench/usage.ts` alone): one million
// charge entries and their hourly rollup in a fresh Postgres database, then the time
// `GET /admin/v1/usage?group_by=day,model` and `GET /v1/usage` take to answer, median of
// several runs. Writes its own section of BENCHMARKS.md and keeps the others as they are.
import os from 'node:os'
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { TOKEN_FIELDS, tokenCount } from '../src/billing/usage-rollup'
import { openDatabase } from '../src/db/client'
import { migrate } from '../src/db/migrate'
import { queryRows } from '../src/db/rows'
import { randomToken } from '../src/util/ids'
import { ADMIN_TOKEN, bearer, startGateway, testConfig } from '../test/support/gateway'
import { writeSection } from './support'

const ENTRIES = Number(process.env.BENCH_USAGE_ENTRIES ?? 1_000_000)
const KEYS = 20
const ACCOUNTS = 5
const MODELS = ['openai/gpt-5', 'openai/gpt-5-mini', 'anthropic/claude-sonnet-4-5', 'google/gemini-2.5-flash']
const DAYS = 30
const RUNS = 9
const SECTION = '## Usage summaries'
const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

export async function benchUsage(): Promise<string> {
  const name = `tollgate_bench_usage_${randomToken(8).toLowerCase()}`
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  const handle = await openDatabase({ url: url.toString() })
  // The fixture's bulk statements take longer than a request's statement deadline: a connection without one.
  const setup = await openDatabase({ url: url.toString(), statementDeadlineMs: null })
  try {
    await migrate(setup.db)
    console.error(`usage bench: database ${name} ready; inserting ${ENTRIES} charge entries`)
    const harness = startGateway({ ...handle, url: url.toString() }, { config: testConfig() })
    // Real keys and accounts, so /v1/usage authenticates as one of them.
    const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, () => harness.account(1000)))
    const keys = await Promise.all(Array.from({ length: KEYS }, (_, index) => harness.key({ account_id: accounts[index % ACCOUNTS]?.id })))
    const parties = JSON.stringify(keys.map((key) => ({ key_id: key.id, account_id: key.accountId })))

    const started = performance.now()
    // Charges spread over the last 30 days, over 20 keys and 4 models, as settlements write them.
    await setup.db.execute(sql`
      with parties as (select row_number() over () - 1 as n, * from jsonb_to_recordset(${parties}::jsonb) as p(key_id text, account_id text)),
      models as (select row_number() over () - 1 as n, m from unnest(${`{${MODELS.map((model) => `"${model}"`).join(',')}}`}::text[]) as m)
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, env, request_id, hold_id, model, route, usage, uncollected, created_at)
      select 'charge', 100 + i % 5000, 'wallet_' || p.account_id, 'wallet', p.account_id, p.key_id, 'prod', 'req_' || i, 'hold_' || i, m.m, 'openai',
        jsonb_build_object('input_tokens', 10 + i % 3000, 'output_tokens', 5 + i % 700, 'cache_read_tokens', i % 100, 'cache_write_tokens', 0, 'source', 'provider'),
        0, now() - ((i::bigint * 7919) % ${DAYS * 86_400}) * interval '1 second' - (i % 7) * interval '1 millisecond'
      from generate_series(1, ${ENTRIES}::int) as i
      join parties p on p.n = i % ${KEYS}
      join models m on m.n = (i / ${KEYS}) % ${MODELS.length}`)
    const inserted = performance.now() - started
    console.error(`usage bench: inserted in ${(inserted / 1000).toFixed(1)} s; writing the rollup`)
    // The rollup those settlements would have written with them (the same token count as hold-statements.ts).
    await setup.db.execute(sql`
      insert into usage_rollups (hour, account_id, key_id, user_sub, model, requests, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, uncollected)
      select date_trunc('hour', created_at, 'UTC'), coalesce(account_id, ''), coalesce(key_id, ''), coalesce(user_sub, ''), coalesce(model, ''), count(*),
        ${sql.join(
          TOKEN_FIELDS.map((field) => sql`sum(${tokenCount('usage', field)})`),
          sql`, `,
        )}, sum(amount), sum(uncollected)
      from ledger_entries where kind = 'charge' group by 1, 2, 3, 4, 5`)
    await setup.db.execute(sql`analyze`)
    const [counts] = await queryRows<{ entries: number; rollups: number }>(
      handle.db,
      sql`select (select count(*) from ledger_entries where kind = 'charge')::int as entries, (select count(*) from usage_rollups)::int as rollups`,
    )

    const time = async (path: string, headers: Record<string, string>) => {
      const durations: number[] = []
      let bytes = 0
      for (let run = 0; run <= RUNS; run++) {
        const begin = performance.now()
        const reply = await harness.call('GET', path, { headers })
        if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text.slice(0, 200)}`)
        bytes = reply.text.length
        // The first run warms the connection and the plan cache; it is not counted.
        if (run > 0) durations.push(performance.now() - begin)
      }
      return { median: median(durations), max: Math.max(...durations), bytes }
    }
    const adminHeaders = bearer(ADMIN_TOKEN)
    const key = keys[0]
    if (!key) throw new Error('no key')
    const results: [string, Awaited<ReturnType<typeof time>>][] = [
      ['`GET /admin/v1/usage?group_by=day,model&limit=1000` (all 30 days)', await time('/admin/v1/usage?group_by=day,model&limit=1000', adminHeaders)],
      ['`GET /admin/v1/usage?group_by=month,account,key,model`', await time('/admin/v1/usage?group_by=month,account,key,model&limit=1000', adminHeaders)],
      ['`GET /v1/usage` (one key: this month by day and model, 100 recent)', await time('/v1/usage', bearer(key.key))],
    ]
    harness.services.close()

    const lines = [
      SECTION,
      '',
      `Measured by \`bun bench/usage.ts\` (part of \`bun run bench\`) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Bun ${Bun.version}, local Postgres.`,
      `A fresh database with ${counts?.entries.toLocaleString('en-US')} charge entries (inserted in ${(inserted / 1000).toFixed(1)} s) spread over the last ${DAYS} days, ${KEYS} keys of ${ACCOUNTS} accounts and ${MODELS.length} models, and their hourly rollup (${counts?.rollups.toLocaleString('en-US')} rows, as the settling statements write it).`,
      `Each request goes through the whole gateway in process (authentication, routing, JSON), ${RUNS} runs after one warm-up; the target is under 200 ms.`,
      '',
      '| request | median | slowest | answer size |',
      '| --- | --- | --- | --- |',
      ...results.map(
        ([label, result]) => `| ${label} | ${result.median.toFixed(1)} ms | ${result.max.toFixed(1)} ms | ${(result.bytes / 1024).toFixed(1)} KB |`,
      ),
      '',
    ]
    return lines.join('\n')
  } finally {
    await setup.close()
    await handle.close()
    await admin.unsafe(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
}

/** Puts `section` in BENCHMARKS.md in place of its previous figures, every other section kept as it is. */
if (import.meta.main) {
  const section = await benchUsage()
  writeSection(section)
  console.log(section)
}
