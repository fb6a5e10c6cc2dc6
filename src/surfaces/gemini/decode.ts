import type { ImagePart, Message, Prompt, TextPart, ToolCallPart, ToolChoice, ToolDefinition, ToolResultPart } from '../../canonical/prompt'
import { InvalidRequestError } from '../../errors/kinds'
import { isRecord } from '../../util/is-record'
import type { Content, FunctionCallingConfig, FunctionDeclaration, GenerateContentRequest, GenerationConfig, Part } from '../../wire/gemini/request'

/**
 * A client's generateContent body (https://ai.google.dev/api/generate-content#request-body),
 * checked field by field: anything the gateway cannot serve faithfully is a 400 naming the
 * field (docs/api.md#gemini-api), never a silent change of meaning, a stall or a charge.
 */

/** The part kinds the gateway reads; any other key in a part is an unknown part type. */
const PART_KINDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'] as const
/** Keys a part may carry beside its one kind: metadata the gateway does not need. */
const PART_METADATA = new Set(['thought', 'thoughtSignature', 'partMetadata', 'videoMetadata'])
/** Stop sequences Google accepts in one request. */
const MAX_STOP_SEQUENCES = 5

function invalid(param: string, message: string): never {
  throw new InvalidRequestError(`${param}: ${message}`, { param })
}

/** The body's generateContent request, typed, or 400 naming the first field that is not one. */
export function readGenerateContentRequest(body: unknown, at = ''): GenerateContentRequest {
  if (!isRecord(body)) invalid(at === '' ? 'body' : at.slice(0, -1), 'must be a JSON object.')
  const contents = body.contents
  if (!Array.isArray(contents) || contents.length === 0) invalid(`${at}contents`, 'must be a non-empty list of contents.')
  const system = body.systemInstruction
  return {
    contents: contents.map((content, index) => readContent(content, `${at}contents[${index}]`)),
    // The role of a system instruction means nothing (clients write "user", "system" or none).
    ...(system === undefined || system === null ? {} : { systemInstruction: readContent(system, `${at}systemInstruction`, false) }),
    ...(body.generationConfig === undefined || body.generationConfig === null
      ? {}
      : { generationConfig: readGenerationConfig(body.generationConfig, `${at}generationConfig`) }),
    ...(body.tools === undefined || body.tools === null ? {} : { tools: readTools(body.tools, `${at}tools`) }),
    ...(body.toolConfig === undefined || body.toolConfig === null ? {} : { toolConfig: readToolConfig(body.toolConfig, `${at}toolConfig`) }),
  }
}

function readContent(value: unknown, at: string, hasRole = true): Content {
  if (!isRecord(value)) invalid(at, 'must be an object with `role` and `parts`.')
  const { role, parts } = value
  if (hasRole && role !== undefined && role !== 'user' && role !== 'model') invalid(`${at}.role`, `must be "user" or "model"; got ${JSON.stringify(role)}.`)
  if (!Array.isArray(parts)) invalid(`${at}.parts`, 'must be a list of parts.')
  const parsed = parts.map((part, index) => readPart(part, `${at}.parts[${index}]`))
  return hasRole && (role === 'user' || role === 'model') ? { role, parts: parsed } : { parts: parsed }
}

function readPart(value: unknown, at: string): Part {
  if (!isRecord(value)) invalid(at, 'must be an object.')
  const kinds = PART_KINDS.filter((kind) => value[kind] !== undefined)
  const unknown = Object.keys(value).filter((key) => !(PART_KINDS as readonly string[]).includes(key) && !PART_METADATA.has(key))
  if (unknown.length > 0 || kinds.length !== 1) {
    const found = unknown.length > 0 ? `unknown part type ${JSON.stringify(unknown[0])}` : kinds.length === 0 ? 'no part type' : 'more than one part type'
    invalid(at, `${found}; a part has exactly one of ${PART_KINDS.join(', ')}.`)
  }
  const thought = value.thought === true ? { thought: true } : {}
  if (typeof value.text === 'string') return { text: value.text, ...thought }
  if (value.text !== undefined) invalid(`${at}.text`, 'must be a string.')
  if (value.inlineData !== undefined) {
    const data = value.inlineData
    if (!isRecord(data) || typeof data.mimeType !== 'string' || typeof data.data !== 'string') {
      invalid(`${at}.inlineData`, 'must be {mimeType, data} with base64 data.')
    }
    return { inlineData: { mimeType: data.mimeType, data: data.data } }
  }
  if (value.fileData !== undefined) {
    const file = value.fileData
    if (!isRecord(file) || typeof file.fileUri !== 'string' || (file.mimeType !== undefined && typeof file.mimeType !== 'string')) {
      invalid(`${at}.fileData`, 'must be {fileUri, mimeType}.')
    }
    return { fileData: { fileUri: file.fileUri, ...(typeof file.mimeType === 'string' ? { mimeType: file.mimeType } : {}) } }
  }
  if (value.functionCall !== undefined) {
    const call = value.functionCall
    if (!isRecord(call) || typeof call.name !== 'string' || call.name === '' || (call.id !== undefined && typeof call.id !== 'string')) {
      invalid(`${at}.functionCall`, 'must be {name, args} with a non-empty name.')
    }
    return { functionCall: { name: call.name, args: call.args ?? {}, ...(typeof call.id === 'string' ? { id: call.id } : {}) } }
  }
  const response = value.functionResponse
  if (!isRecord(response) || typeof response.name !== 'string' || response.name === '' || (response.id !== undefined && typeof response.id !== 'string')) {
    invalid(`${at}.functionResponse`, 'must be {name, response} with a non-empty name.')
  }
  return { functionResponse: { name: response.name, response: response.response ?? {}, ...(typeof response.id === 'string' ? { id: response.id } : {}) } }
}

/**
 * What the gateway reads of generationConfig; structured output is kept for the plan, which
 * refuses it where it cannot be honoured. Other fields (topK, seed, thinkingConfig, ...) have no
 * place in the canonical prompt and are not sent.
 */
function readGenerationConfig(value: unknown, at: string): GenerationConfig {
  if (!isRecord(value)) invalid(at, 'must be an object.')
  const { temperature, topP, stopSequences, candidateCount, maxOutputTokens, responseMimeType, responseSchema, responseJsonSchema } = value
  if (temperature !== undefined && (typeof temperature !== 'number' || !(temperature >= 0 && temperature <= 2))) {
    invalid(`${at}.temperature`, `must be a number from 0 to 2; got ${JSON.stringify(temperature)}.`)
  }
  if (topP !== undefined && (typeof topP !== 'number' || !(topP >= 0 && topP <= 1)))
    invalid(`${at}.topP`, `must be a number from 0 to 1; got ${JSON.stringify(topP)}.`)
  if (stopSequences !== undefined) {
    if (!Array.isArray(stopSequences) || stopSequences.length > MAX_STOP_SEQUENCES || !stopSequences.every((stop) => typeof stop === 'string' && stop !== '')) {
      invalid(`${at}.stopSequences`, `must be a list of at most ${MAX_STOP_SEQUENCES} non-empty strings.`)
    }
  }
  if (candidateCount !== undefined && candidateCount !== 1) invalid(`${at}.candidateCount`, 'must be 1: the gateway serves one candidate per request.')
  if (maxOutputTokens !== undefined && typeof maxOutputTokens !== 'number') {
    invalid(`${at}.maxOutputTokens`, `must be a whole number of at least 1; got ${JSON.stringify(maxOutputTokens)}.`)
  }
  if (responseMimeType !== undefined && typeof responseMimeType !== 'string') invalid(`${at}.responseMimeType`, 'must be a string.')
  // maxOutputTokens is checked against the model's maximum by the plan, which knows the model.
  return {
    ...(typeof temperature === 'number' ? { temperature } : {}),
    ...(typeof topP === 'number' ? { topP } : {}),
    ...(Array.isArray(stopSequences) ? { stopSequences: stopSequences.map(String) } : {}),
    ...(typeof maxOutputTokens === 'number' ? { maxOutputTokens } : {}),
    ...(typeof responseMimeType === 'string' ? { responseMimeType } : {}),
    ...(responseSchema !== undefined ? { responseSchema } : {}),
    ...(responseJsonSchema !== undefined ? { responseJsonSchema } : {}),
  }
}

function readTools(value: unknown, at: string): { functionDeclarations: FunctionDeclaration[] }[] {
  if (!Array.isArray(value)) invalid(at, 'must be a list of tools.')
  return value.map((tool, index) => {
    const toolAt = `${at}[${index}]`
    if (!isRecord(tool)) invalid(toolAt, 'must be an object.')
    const other = Object.keys(tool).find((key) => key !== 'functionDeclarations')
    if (other !== undefined) invalid(`${toolAt}.${other}`, 'is not served through this gateway; only functionDeclarations are.')
    const declarations = tool.functionDeclarations
    if (!Array.isArray(declarations)) invalid(`${toolAt}.functionDeclarations`, 'must be a list of function declarations.')
    return { functionDeclarations: declarations.map((declaration, position) => readDeclaration(declaration, `${toolAt}.functionDeclarations[${position}]`)) }
  })
}

function readDeclaration(value: unknown, at: string): FunctionDeclaration {
  if (!isRecord(value) || typeof value.name !== 'string' || value.name === '') invalid(at, 'must be an object with a non-empty name.')
  if (value.description !== undefined && typeof value.description !== 'string') invalid(`${at}.description`, 'must be a string.')
  // `parametersJsonSchema` is JSON Schema as it is; `parameters` is Google's OpenAPI subset, which is JSON Schema too for what functions use.
  const schema = value.parametersJsonSchema ?? value.parameters ?? { type: 'object', properties: {} }
  if (!isRecord(schema)) invalid(`${at}.parameters`, 'must be a schema object.')
  return { name: value.name, ...(typeof value.description === 'string' ? { description: value.description } : {}), parameters: schema }
}

function readToolConfig(value: unknown, at: string): { functionCallingConfig: FunctionCallingConfig } {
  if (!isRecord(value)) invalid(at, 'must be an object.')
  const config = value.functionCallingConfig ?? { mode: 'AUTO' }
  if (!isRecord(config)) invalid(`${at}.functionCallingConfig`, 'must be an object.')
  const mode = config.mode ?? 'AUTO'
  if (mode !== 'AUTO' && mode !== 'ANY' && mode !== 'NONE')
    invalid(`${at}.functionCallingConfig.mode`, `must be AUTO, ANY or NONE; got ${JSON.stringify(mode)}.`)
  const names = config.allowedFunctionNames
  if (names !== undefined && (!Array.isArray(names) || !names.every((name) => typeof name === 'string'))) {
    invalid(`${at}.functionCallingConfig.allowedFunctionNames`, 'must be a list of function names.')
  }
  return { functionCallingConfig: { mode, ...(names ? { allowedFunctionNames: names as string[] } : {}) } }
}

/**
 * A checked request as the canonical prompt, for a route reached by translation. Gemini pairs a
 * function response with its call by name (or id, when the call had one): each response takes
 * the earliest unanswered call of its name, whose canonical id is the call's own or one made here.
 */
export function decodeGeminiRequest(request: GenerateContentRequest, maxOutputTokens: number, stream: boolean): Prompt {
  const pending = new Map<string, string[]>()
  let made = 0
  const messages: Message[] = []
  request.contents.forEach((content, index) => {
    const parts = content.parts ?? []
    if (content.role === 'model') {
      const assistant = parts.flatMap((part): (TextPart | ToolCallPart | { type: 'reasoning'; text: string })[] => {
        if (part.functionCall) {
          const id = part.functionCall.id ?? `call_${made++}`
          pending.set(part.functionCall.name, [...(pending.get(part.functionCall.name) ?? []), id])
          return [{ type: 'tool-call', id, name: part.functionCall.name, input: part.functionCall.args ?? {} }]
        }
        if (part.text === undefined) invalid(`contents[${index}].parts`, 'a model turn holds text and function calls only.')
        return [part.thought ? { type: 'reasoning', text: part.text } : { type: 'text', text: part.text }]
      })
      messages.push({ role: 'assistant', content: assistant })
      return
    }
    const results: ToolResultPart[] = []
    const user: (TextPart | ImagePart)[] = []
    parts.forEach((part, position) => {
      const at = `contents[${index}].parts[${position}]`
      if (part.functionResponse) {
        const { name, id, response } = part.functionResponse
        const waiting = pending.get(name) ?? []
        const callId = id !== undefined && waiting.includes(id) ? id : waiting[0]
        if (callId === undefined) invalid(`${at}.functionResponse`, `answers no function call named ${JSON.stringify(name)} in an earlier model turn.`)
        pending.set(
          name,
          waiting.filter((waitingId) => waitingId !== callId),
        )
        results.push({ type: 'tool-result', toolCallId: callId, content: JSON.stringify(response) })
      } else if (part.functionCall) invalid(`${at}.functionCall`, 'only a model turn may call a function.')
      else user.push(userPart(part, at))
    })
    if (results.length > 0) messages.push({ role: 'tool', content: results })
    if (user.length > 0) messages.push({ role: 'user', content: user })
  })
  const tools = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations)
  return {
    ...(request.systemInstruction ? { system: systemText(request.systemInstruction) } : {}),
    messages,
    ...(tools.length > 0
      ? { tools: tools.map((tool): ToolDefinition => ({ name: tool.name, description: tool.description, inputSchema: tool.parameters })) }
      : {}),
    ...(request.toolConfig ? { toolChoice: toolChoiceOf(request.toolConfig.functionCallingConfig) } : {}),
    maxOutputTokens,
    ...(request.generationConfig?.temperature !== undefined ? { temperature: request.generationConfig.temperature } : {}),
    ...(request.generationConfig?.topP !== undefined ? { topP: request.generationConfig.topP } : {}),
    ...(request.generationConfig?.stopSequences ? { stopSequences: request.generationConfig.stopSequences } : {}),
    stream,
  }
}

function userPart(part: Part, at: string): TextPart | ImagePart {
  if (part.text !== undefined) return { type: 'text', text: part.text }
  if (part.inlineData) {
    if (!part.inlineData.mimeType.startsWith('image/')) invalid(`${at}.inlineData.mimeType`, 'only images are served inline on this model.')
    return { type: 'image', mediaType: part.inlineData.mimeType, data: part.inlineData.data }
  }
  const file = part.fileData
  if (!file?.mimeType?.startsWith('image/')) invalid(`${at}.fileData.mimeType`, 'only images are served by URL on this model.')
  return { type: 'image', mediaType: file.mimeType, url: file.fileUri }
}

function systemText(content: Content): string {
  return (content.parts ?? [])
    .map((part, index) => {
      if (part.text === undefined) invalid(`systemInstruction.parts[${index}]`, 'a system instruction holds text only.')
      return part.text
    })
    .join('\n')
}

function toolChoiceOf(config: FunctionCallingConfig): ToolChoice {
  if (config.mode === 'NONE') return { type: 'none' }
  if (config.mode === 'AUTO') return { type: 'auto' }
  const [only, ...more] = config.allowedFunctionNames ?? []
  return only !== undefined && more.length === 0 ? { type: 'tool', name: only } : { type: 'required' }
}
