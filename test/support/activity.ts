import type { TestGateway } from './gateway'

/**
 * A request's activity record through the admin API (with its ledger entries), once its request
 * has ended and the writer has written it: the writer is flushed rather than waited for.
 */
export async function recordOf(harness: TestGateway, requestId: string | null): Promise<any> {
  for (let waited = 0; waited < 5000; waited += 10) {
    await harness.services.activity.flush()
    const reply = await harness.admin('GET', `/requests/${requestId}`)
    if (reply.status === 200) return reply.json
    await Bun.sleep(10)
  }
  throw new Error(`no activity record for ${requestId}`)
}
