import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { generateApiKey } from '../../src/auth/api-key-secret'
import { REDACTED, scrubCredentials } from '../../src/util/scrub-credentials'

describe('scrubCredentials', () => {
  test('takes out every credential shape, keeping the words around it', () => {
    const key = generateApiKey('prod')
    const cases: [string, string][] = [
      [
        'Incorrect API key provided: sk-upstream-a. You can find your API key at https://platform.openai.com/account/api-keys.',
        `Incorrect API key provided: ${REDACTED}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      ],
      ['Incorrect API key provided: sk-proj-abc1***************************************wxyz.', `Incorrect API key provided: ${REDACTED}.`],
      ['invalid x-api-key sk-ant-api03-AbCdEf0123456789_xyz-QQ', `invalid x-api-key ${REDACTED}`],
      ['sk-test', REDACTED],
      [`key ${key} is revoked`, `key ${REDACTED} is revoked`],
      ['API key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY not valid', `API key ${REDACTED} not valid`],
      ['token ya29.a0AfH6SMBx-long_token.part.', `token ${REDACTED}.`],
      ['header was Authorization: Bearer abc.DEF-123~xyz.', `header was Authorization: Bearer ${REDACTED}.`],
      ['authorization: bearer test-admin-token-0123456789', `authorization: bearer ${REDACTED}`],
      ['Basic dXNlcjpwYXNzd29yZA==', `Basic ${REDACTED}`],
      [
        'bad token eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U here',
        `bad token ${REDACTED} here`,
      ],
      [`hash ${createHash('sha256').update(key).digest('hex')} seen`, `hash ${REDACTED} seen`],
      ['secret Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg7Hq2Kp seen', `secret ${REDACTED} seen`],
    ]
    for (const [text, expected] of cases) expect(scrubCredentials(text)).toBe(expected)
  })

  test('leaves real provider error messages as they are', () => {
    const messages = [
      // OpenAI (docs/upstreams.md#openai-errors and observed)
      'The model `gpt-9` does not exist or you do not have access to it.',
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
      "Invalid 'messages[1].content': string too long. Expected a string with maximum length 10485760, but got a string with length 10485761 instead.",
      "Invalid value for 'tool_choice': 'required' is not one of ['none', 'auto'].",
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      "Previous response with id 'resp_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b' not found.",
      "Invalid schema for function 'get_weather': In context=('properties', 'location'), 'additionalProperties' is required to be supplied and to be false.",
      'You must provide a model parameter.',
      // Anthropic (docs/upstreams.md#anthropic-errors and observed)
      'model: claude-foo',
      'prompt is too long: 208310 tokens > 200000 maximum',
      'messages.1.content.0.tool_result: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01T1x1fJ34qAmk2tNTrN7Up6. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      'max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929',
      'Overloaded',
      'The request must include a Bearer token',
      // Google (docs/upstreams.md#gemini and observed)
      'models/custom-gemini-2.0-flash is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.',
      'Invalid JSON payload received. Unknown name "maxTokens" at \'generation_config\': Cannot find field.',
      'projects/my-project-123456/locations/us-central1/publishers/google/models/gemini-2.0-flash-001 is not servable in region europe-west4',
      '* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.',
      'generation_config.response_schema.properties.answer.type: must be specified',
      'meta-llama/Llama-3.1-405B-Instruct-Turbo is not available; try Qwen/Qwen2.5-72B-Instruct-Turbo',
    ]
    for (const message of messages) expect(scrubCredentials(message)).toBe(message)
  })

  test('never redacts a file path, however its directories are named', () => {
    const paths = [
      '/srv/gateway/configs/Tollgate-EU-West1/models.json',
      '/home/ci/.config/tollgate/sk-tools/x.json',
      '/var/lib/tollgate/Prod-Cluster-AP-Southeast2-Zone3B/data',
      '/tmp/tollgate-lifecycle-Xy7Qp2/embedded',
      '/opt/tollgate/releases/2026-11-29T02-10-00Z/tollgate.json',
      '/var/lib/docker/overlay2/3f4e9a0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f/merged',
      '~/deploy/Tollgate-EU-West1/tollgate.json',
      './configs/Tollgate-EU-West1/models.json',
      '../shared/sk-tools/catalogue.json',
      'configs/Tollgate-EU-West1/models.json',
    ]
    for (const path of paths) {
      expect(scrubCredentials(path)).toBe(path)
      // As log lines carry them: a JSON field, a message, a key=value pair.
      const line = JSON.stringify({ message: `config reloaded from ${path}`, config: path })
      expect(scrubCredentials(line)).toBe(line)
      expect(scrubCredentials(`TOLLGATE_CONFIG=${path}: cannot read the config file`)).toBe(`TOLLGATE_CONFIG=${path}: cannot read the config file`)
    }
  })

  test('still redacts every real key shape, beside a path, inside a path, or quoted in a log line', () => {
    const keys = [
      `sk-proj-${'Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1'}_T3BlbkFJ${'x8Zq4Lw2Rt6Yp0Nv3Hb7Kd1Mf5Sg9Ja2Ce4Ui8Ko6Wx0'}`,
      `sk-ant-api03-${'Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8Vb7Nm6Qw5Er4Ty3Ui2Op1As0Df9Gh8Jk7Lz6Xc5Vb4Nm3Qw2Er1Ty0Ui9Op8As7'}-AbCdEfAA`,
      'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY',
      generateApiKey('prod'),
      generateApiKey('dev'),
      'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ]
    for (const key of keys) {
      const line = JSON.stringify({
        message: `upstream said: Incorrect API key provided: ${key}`,
        config: '/srv/gateway/configs/Tollgate-EU-West1/models.json',
      })
      const scrubbed = scrubCredentials(line)
      expect(scrubbed).not.toContain(key)
      expect(scrubbed).toContain('/srv/gateway/configs/Tollgate-EU-West1/models.json')
      expect(scrubCredentials(`/etc/tollgate/keys/${key}`)).toBe(`/etc/tollgate/keys/${REDACTED}`)
      expect(scrubCredentials(`loading /srv/${key}/x.json`)).not.toContain(key)
    }
    // A bearer token is a token, even when it starts like a path.
    expect(scrubCredentials('Authorization: Bearer /AbC9xYz/Qw8Er7Ty6Ui5')).toBe(`Authorization: Bearer ${REDACTED}`)
    expect(scrubCredentials('authorization: Bearer abc.DEF-123~xyz in /srv/gateway/tollgate.json')).toBe(
      `authorization: Bearer ${REDACTED} in /srv/gateway/tollgate.json`,
    )
    // A text that already holds the character paths are set aside with is still scrubbed.
    expect(scrubCredentials(`\uE000 ${keys[0]} /srv/x.json`)).toBe(`\uE000 ${REDACTED} /srv/x.json`)
    // A random secret is redacted even as a path segment.
    expect(scrubCredentials('/srv/Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg7Hq2Kp/x')).toBe(`/srv/${REDACTED}/x`)
  })
})
