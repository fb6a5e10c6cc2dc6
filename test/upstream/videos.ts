import type { VideoScript } from './scripts'

/**
 * Video jobs in two wire formats: OpenAI's videos API (POST /v1/videos multipart, GET
 * /v1/videos/{id}, GET /v1/videos/{id}/content, DELETE /v1/videos/{id}; docs/upstreams.md#openai-videos) and Veo
 * on Vertex AI (:predictLongRunning, :fetchPredictOperation; docs/upstreams.md#veo, which has no
 * cancel), each polled until done. Cancelled jobs are remembered for tests to check.
 */
export const MP4_BYTES = new Uint8Array([0, 0, 0, 24, 102, 116, 121, 112, 109, 112, 52, 50])

interface Job {
  script: VideoScript
  pollsLeft: number
  readyAt: number
  seconds: string
}

export class VideoJobs {
  private readonly jobs = new Map<string, Job>()
  /** Ids of the jobs a DELETE removed, in order. */
  readonly cancelled: string[] = []
  private next = 1

  start(script: VideoScript, seconds: string): string {
    const id = `video_${this.next++}`
    this.jobs.set(id, { script, pollsLeft: script.pollsBeforeDone ?? (script.readyAfterMs ? 0 : 1), readyAt: Date.now() + (script.readyAfterMs ?? 0), seconds })
    return id
  }

  /** Advances a job by one poll; undefined while it runs, else its result. */
  poll(id: string): Job | undefined {
    const job = this.jobs.get(id)
    if (!job || job.script.neverFinishes) return undefined
    if (job.pollsLeft > 0) {
      job.pollsLeft--
      return undefined
    }
    return Date.now() >= job.readyAt ? job : undefined
  }

  has(id: string): boolean {
    return this.jobs.has(id)
  }

  seconds(id: string): string {
    return this.jobs.get(id)?.seconds ?? '8'
  }

  /** Whether a poll would still find the job running. */
  running(id: string): boolean {
    const job = this.jobs.get(id)
    return job !== undefined && (job.script.neverFinishes === true || job.pollsLeft > 0 || Date.now() < job.readyAt)
  }

  refusesCancel(id: string): boolean {
    return this.jobs.get(id)?.script.refuseCancel === true
  }

  cancel(id: string): void {
    this.jobs.delete(id)
    this.cancelled.push(id)
  }
}

function resource(id: string, status: string, seconds: string, extra: object = {}) {
  return {
    id,
    object: 'video',
    model: 'sora-2',
    status,
    progress: status === 'completed' ? 100 : 0,
    created_at: 1_712_697_600,
    completed_at: null,
    expires_at: null,
    prompt: 'p',
    size: '1280x720',
    seconds,
    remixed_from_video_id: null,
    error: null,
    ...extra,
  }
}

export function openAiVideoCreate(jobs: VideoJobs, form: Record<string, string>, script: VideoScript): Response {
  const id = jobs.start(script, form.seconds ?? '4')
  return Response.json(resource(id, 'queued', form.seconds ?? '4'))
}

export function openAiVideoRetrieve(jobs: VideoJobs, id: string): Response {
  if (!jobs.has(id)) return Response.json({ error: { message: 'no such video', type: 'invalid_request_error', param: null, code: null } }, { status: 404 })
  const job = jobs.poll(id)
  if (!job) return Response.json(resource(id, 'in_progress', jobs.seconds(id)))
  if (job.script.result === 'failed')
    return Response.json(resource(id, 'failed', job.seconds, { error: { code: 'internal_error', message: 'generation failed' } }))
  if (job.script.result === 'blocked')
    return Response.json(resource(id, 'failed', job.seconds, { error: { code: 'moderation_blocked', message: 'blocked by moderation' } }))
  return Response.json(resource(id, 'completed', job.seconds))
}

/** DELETE /v1/videos/{id}: the job is gone; a script may have the API refuse it while it runs. */
export function openAiVideoDelete(jobs: VideoJobs, id: string): Response {
  if (!jobs.has(id)) return Response.json({ error: { message: 'no such video', type: 'invalid_request_error', param: null, code: null } }, { status: 404 })
  if (jobs.refusesCancel(id) && jobs.running(id)) {
    return Response.json(
      { error: { message: 'Video is still being generated.', type: 'invalid_request_error', param: null, code: 'video_not_deletable' } },
      { status: 400 },
    )
  }
  jobs.cancel(id)
  return Response.json({ id, object: 'video.deleted', deleted: true })
}

export function openAiVideoContent(): Response {
  return new Response(MP4_BYTES, { headers: { 'content-type': 'video/mp4' } })
}

export function veoStart(jobs: VideoJobs, script: VideoScript, model: string): Response {
  const id = jobs.start(script, '8')
  return Response.json({ name: `projects/proj/locations/us-central1/publishers/google/models/${model}/operations/${id}` })
}

export function veoFetch(jobs: VideoJobs, operationName: string): Response {
  const id = operationName.split('/operations/')[1] ?? ''
  const job = jobs.poll(id)
  if (!job) return Response.json({ name: operationName, done: false })
  if (job.script.result === 'failed') return Response.json({ name: operationName, done: true, error: { code: 13, message: 'internal error' } })
  if (job.script.result === 'blocked') {
    return Response.json({
      name: operationName,
      done: true,
      response: {
        '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse',
        raiMediaFilteredCount: 1,
        raiMediaFilteredReasons: ['unsafe content'],
      },
    })
  }
  const video = job.script.asUri
    ? { gcsUri: 'gs://bucket/sample_0.mp4', mimeType: 'video/mp4' }
    : { bytesBase64Encoded: Buffer.from(MP4_BYTES).toString('base64'), mimeType: 'video/mp4' }
  return Response.json({
    name: operationName,
    done: true,
    response: { '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse', raiMediaFilteredCount: 0, videos: [video] },
  })
}
