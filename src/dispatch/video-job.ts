import type { VideoOutcome, VideoRequest } from '../canonical/video'
import { ClientClosedError, UpstreamTimeoutError } from '../errors/kinds'
import type { UpstreamTarget, VideoCapability } from '../providers/adapter'
import type { Route } from './surface'

/** A route whose API makes videos, as the videos surface plans it. */
export type VideoRoute = Route & { video: VideoCapability }

/** The route when its API has the video capability, else unusable. */
export function videoRoute(route: Route): VideoRoute | undefined {
  const { video } = route.adapter
  return video ? { ...route, video } : undefined
}

/**
 * Runs one video job on one route and decides what happens to it when nobody should wait any
 * longer. The job never outlives the provider's `jobTimeoutMs`: then the wait stops, the job
 * is cancelled upstream where the API allows, and the call fails with 504 (not billed).
 *
 * A client that leaves does not by itself stop the job, because a submitted job costs the
 * operator whether anyone waits or not. Where the API can cancel it, the job is cancelled
 * and, once the API confirms, the wait stops with ClientClosedError (the caller releases the
 * hold). Where it cannot, or the API refuses, the job is followed to its end as if the client
 * were there, and its outcome is returned for billing, like an abandoned stream that is billed
 * for what was generated.
 */
export async function runVideoJob(route: VideoRoute, request: VideoRequest, clientSignal: AbortSignal): Promise<VideoOutcome> {
  const { provider } = route
  const { video } = route
  const stopWaiting = new AbortController()
  let deadlinePassed = false
  let cancelledForClient = false
  const deadline = setTimeout(() => {
    deadlinePassed = true
    stopWaiting.abort()
  }, provider.jobTimeoutMs)
  // Video jobs are not traced as attempts (they poll for minutes): nothing extra is sent.
  const target: UpstreamTarget = { provider, model: route.upstreamModel, signal: stopWaiting.signal, headers: {} }

  let jobId: string | undefined
  let announce: () => void = () => {}
  // Settles once the job has an id, or once the attempt ended without one.
  const submitted = new Promise<void>((resolve) => (announce = resolve))
  const running = video.generate(target, request, (id) => {
    jobId = id
    announce()
  })
  running.then(announce, announce)

  /** Asks the API to cancel the job; false when there is no job yet, no way to, or the API refused. */
  const cancelJob = async (): Promise<boolean> => {
    if (jobId === undefined || !video.cancel) return false
    // The waiting signal may be aborted already: the cancel request has its own bound.
    const bound = new AbortController()
    const timer = setTimeout(() => bound.abort(), provider.timeoutMs)
    try {
      await video.cancel({ ...target, signal: bound.signal }, jobId)
      return true
    } catch {
      return false
    } finally {
      clearTimeout(timer)
    }
  }
  const onClientGone = async () => {
    if (!video.cancel) return
    // A submit in flight is let finish: aborting it could leave a job upstream with no id to cancel.
    await submitted
    if (await cancelJob()) {
      cancelledForClient = true
      stopWaiting.abort()
    }
  }
  clientSignal.addEventListener('abort', onClientGone, { once: true })

  try {
    return await running
  } catch (error) {
    if (deadlinePassed) {
      // The client gets its 504 now; the cancel runs on its own and may fail quietly.
      void cancelJob()
      throw new UpstreamTimeoutError(`The video generation did not finish within ${provider.jobTimeoutMs} ms.`, { cause: error })
    }
    if (cancelledForClient) throw new ClientClosedError('The client left; the video job was cancelled upstream.', { cause: error })
    throw error
  } finally {
    clearTimeout(deadline)
    clientSignal.removeEventListener('abort', onClientGone)
  }
}
