import { Elysia, t } from 'elysia'
import { generateVideo } from '../../dispatch/videos'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'

const Image = t.Union([t.String(), t.Object({}, { additionalProperties: true })])
const Seconds = t.Union([t.Number({ exclusiveMinimum: 0 }), t.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })])

export const VideoSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    prompt: t.String({ minLength: 1, maxLength: 32_000 }),
    duration_seconds: t.Optional(Seconds),
    seconds: t.Optional(Seconds),
    aspect_ratio: t.Optional(t.Union([t.Literal('16:9'), t.Literal('9:16')])),
    size: t.Optional(t.String()),
    resolution: t.Optional(t.String()),
    resize_mode: t.Optional(t.String()),
    image: t.Optional(Image),
    input_image: t.Optional(Image),
    image_url: t.Optional(Image),
    last_frame: t.Optional(Image),
  },
  { additionalProperties: false },
)

export function videoRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/videos' }).use(context).post(
    '/v1/videos/generations',
    ({ body, caller, requestId, request }) => generateVideo(services, caller, body.model, body, requestId, request.signal),
    {
      parse: 'json',
      body: VideoSchema,
      detail: {
        tags: ['Videos'],
        summary: 'Generate a video and wait for it (up to about ten minutes), billed per second',
        description: 'Family A models take aspect_ratio, resolution, resize_mode, image and last_frame; family B models take size or aspect_ratio and snap duration_seconds to 4, 8 or 12. Images: an object with b64_json, a data URL, raw base64 or a gs:// URI; not HTTP(S). Bodies over 10 MiB: 413.',
      },
    },
  )
}
