/**
 * What a promise rejects with; fails the test when it resolves. Use it rather than Bun's
 * `expect(promise).rejects` for promises that wait on the embedded database's thread: that
 * assertion waits in a loop of its own that, with the gateway's timers running, was seen never
 * to deliver the thread's answer (the thread posted it; the test hung until its timeout).
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection, but the promise resolved')
}
