#!/usr/bin/env bun
import { formatReport, runFuzz } from '../test/fuzz/fuzzer'
import { FAMILIES, type Family } from '../test/fuzz/mutations'

/**
 * `bun run fuzz [--seed N] [--count N] [--seconds N] [--concurrency N] [--family NAME]… [--only INDEX]…`:
 * mutated requests against a gateway on loopback; exits 1 on any finding.
 */
const USAGE = `usage: bun run fuzz [--seed N] [--count N] [--seconds N] [--concurrency N] [--family NAME]... [--only INDEX]...
families: ${FAMILIES.join(', ')}`

function parse(args: string[]) {
  const options = { seed: 1, count: 500, seconds: 120, concurrency: 4, families: [] as Family[], only: [] as number[] }
  for (let at = 0; at < args.length; at++) {
    const name = args[at]
    const value = args[++at]
    const number = Number(value)
    const needNumber = () => {
      if (!Number.isSafeInteger(number) || number < 0) throw new Error(`${name} takes a whole number`)
      return number
    }
    if (name === '--seed') options.seed = needNumber()
    else if (name === '--count') options.count = needNumber()
    else if (name === '--seconds') options.seconds = needNumber()
    else if (name === '--concurrency') options.concurrency = Math.max(1, needNumber())
    else if (name === '--only') options.only.push(needNumber())
    else if (name === '--family' && FAMILIES.includes(value as Family)) options.families.push(value as Family)
    else throw new Error(`unknown option ${name} ${value ?? ''}`)
  }
  return options
}

let options: ReturnType<typeof parse>
try {
  options = parse(process.argv.slice(2))
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`)
  process.exit(2)
}
const report = await runFuzz({
  seed: options.seed,
  count: options.count,
  seconds: options.seconds,
  concurrency: options.concurrency,
  families: options.families.length ? options.families : undefined,
  only: options.only.length ? options.only : undefined,
  log: (line) => console.error(line),
})
console.log(formatReport(report))
process.exit(report.findings.length ? 1 : 0)
