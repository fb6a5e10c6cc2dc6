/**
 * OpenAI wire types the gateway reads (https://platform.openai.com/docs/api-reference/chat).
 * Only the fields used are typed; everything else passes through untouched.
 */
export interface ChatUsage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null
  completion_tokens_details?: { reasoning_tokens?: number } | null
}

export interface ErrorBody {
  error?: { message?: string; type?: string; param?: string | null; code?: unknown }
}
