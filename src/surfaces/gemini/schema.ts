import { t } from 'elysia'

/**
 * The body of POST /v1beta/models/{model}:{method}, for the API document and the first check: a
 * JSON object. Each method reads its own fields and checks them one by one (decode.ts), so a
 * refusal names the field in Google's words (`contents[1].parts[0]`).
 */
export const GeminiBodySchema = t.Object(
  {
    contents: t.Optional(t.Array(t.Unknown(), { description: 'generateContent, streamGenerateContent, countTokens: the conversation, `[{role, parts}]`' })),
    systemInstruction: t.Optional(t.Unknown({ description: 'The system instruction: `{parts: [{text}]}`' })),
    generationConfig: t.Optional(
      t.Unknown({
        description: 'maxOutputTokens (omitted: the model maximum), temperature (0 to 2), topP (0 to 1), stopSequences (up to 5), candidateCount (1)',
      }),
    ),
    tools: t.Optional(t.Array(t.Unknown(), { description: 'Function declarations: `[{functionDeclarations: [{name, description, parameters}]}]`' })),
    toolConfig: t.Optional(t.Unknown({ description: '`{functionCallingConfig: {mode: AUTO | ANY | NONE, allowedFunctionNames}}`' })),
    generateContentRequest: t.Optional(t.Unknown({ description: 'countTokens: a whole generateContent request to count, instead of `contents`' })),
    content: t.Optional(t.Unknown({ description: 'embedContent: the text to embed, `{parts: [{text}]}`' })),
    outputDimensionality: t.Optional(t.Integer({ minimum: 1, description: 'embedContent: the vector size, where the model can shorten it' })),
    requests: t.Optional(t.Array(t.Unknown(), { description: 'batchEmbedContents: up to 100 `{model, content, outputDimensionality}`' })),
  },
  { additionalProperties: true },
)

export const GeminiModelSchema = t.Object(
  {
    name: t.String({ description: '`models/<gateway model id>`' }),
    displayName: t.String(),
    inputTokenLimit: t.Optional(t.Integer()),
    outputTokenLimit: t.Optional(t.Integer()),
    supportedGenerationMethods: t.Array(t.String()),
  },
  { additionalProperties: true },
)
