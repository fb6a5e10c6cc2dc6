/**
 * Anthropic wire types the gateway reads (https://docs.claude.com/en/api/messages). Only the
 * fields used are typed; everything else passes through untouched.
 */
export interface MessagesUsage {
  input_tokens?: number
  output_tokens?: number
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
  server_tool_use?: { web_search_requests?: number | null } | null
}

export interface ErrorBody {
  type?: 'error'
  /** `code` is not Anthropic's: an upstream speaking its format may add one (another gateway does). */
  error?: { type?: string; message?: string; code?: unknown }
}

/** The API version sent upstream when the client names none (the header is optional for clients). */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01'
