/**
 * The provider-neutral request: what every surface decodes into and every upstream API encodes
 * from, so N surfaces and M upstreams need N + M translators. Shaped after the Vercel AI SDK's
 * language-model prompt (packages/provider/src/language-model/): small tagged parts.
 */

/** Text a person or the model wrote. */
export interface TextPart {
  type: 'text'
  text: string
}

/** A picture, inline (base64) or by URL. */
export interface ImagePart {
  type: 'image'
  /** `data` holds base64 when `url` is absent. */
  mediaType?: string
  data?: string
  url?: string
}

/** The model's visible reasoning; `signature` must round-trip untouched where the API has one. */
export interface ReasoningPart {
  type: 'reasoning'
  text: string
  signature?: string
}

/** The model asking the client to run a tool. `input` is the parsed JSON arguments. */
export interface ToolCallPart {
  type: 'tool-call'
  id: string
  name: string
  input: unknown
}

/** The client's answer to a tool call. */
export interface ToolResultPart {
  type: 'tool-result'
  toolCallId: string
  /** Text, or parts (text and images) for APIs that take them. */
  content: string | (TextPart | ImagePart)[]
  isError?: boolean
}

export type Message =
  | { role: 'user'; content: (TextPart | ImagePart)[] }
  | { role: 'assistant'; content: (TextPart | ReasoningPart | ToolCallPart)[] }
  | { role: 'tool'; content: ToolResultPart[] }

/**
 * A JSON Schema as a client wrote it: free-form by nature (any keyword, any nesting). The
 * gateway passes it on and never reads inside it.
 */
export type JsonSchema = Record<string, unknown>

export interface ToolDefinition {
  name: string
  description?: string
  /** JSON Schema of the tool's input. */
  inputSchema: JsonSchema
}

/**
 * The output allowance assumed when neither the request nor the model's config names one: what
 * a hold is sized for, and what an upstream API that requires a number is asked for, so that
 * the upstream never generates more than the hold covers.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string }

export interface Prompt {
  /** Instructions before the conversation. */
  system?: string
  messages: Message[]
  tools?: ToolDefinition[]
  toolChoice?: ToolChoice
  /**
   * The most output tokens to generate: the request's number, else the model's configured
   * maximum, else DEFAULT_MAX_OUTPUT_TOKENS: the allowance the hold assumed, which the surfaces
   * always set. An API that requires a number asks for the default when it is absent.
   */
  maxOutputTokens?: number
  temperature?: number
  topP?: number
  stopSequences?: string[]
  stream: boolean
}
