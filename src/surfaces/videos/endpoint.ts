import { t } from 'elysia'
import { JsonInteger } from '../../http/schemas'
import { surfaceEndpoint } from '../endpoint'
import { VideoSchema } from './schema'
import { videos } from './surface'

/** The answer, once the job is done: the video as `b64_json` or `url`. */
const VideoAnswerSchema = t.Object(
  {
    created: JsonInteger({}),
    model: t.String(),
    data: t.Array(
      t.Object({ b64_json: t.Optional(t.String()), url: t.Optional(t.String()), mime_type: t.Optional(t.String()) }, { additionalProperties: true }),
    ),
    duration_seconds: t.Optional(t.Number()),
    usage: t.Object({ video_seconds: t.Number(), cost: t.Number({ description: 'Credits charged' }) }),
  },
  { additionalProperties: true },
)

export const videosEndpoint = surfaceEndpoint({
  path: '/v1/videos/generations',
  parse: 'json',
  schema: VideoSchema,
  surface: videos,
  response: { json: VideoAnswerSchema },
  detail: {
    tags: ['Videos'],
    summary: 'Generate a video and wait for it (up to about ten minutes), billed per second',
    description:
      'Family A models take aspect_ratio, resolution, resize_mode, image and last_frame; family B models take size or aspect_ratio and snap duration_seconds to 4, 8 or 12. Images: an object with b64_json, a data URL, raw base64 or a gs:// URI; not HTTP(S). Bodies over 10 MiB: 413.',
  },
})
