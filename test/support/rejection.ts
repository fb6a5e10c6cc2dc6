/**
 * What a promise rejects with; fails when it resolves. For promises that wait on the embedded
 * database's thread: Bun's `expect(promise).rejects` waits for a pending promise in a loop of its
 * own that, with the gateway's timers running, was seen never to deliver the thread's answer (the
 * thread posted it; the test hung until its timeout). Awaiting the promise first avoids that loop.
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection, but the promise resolved')
}
