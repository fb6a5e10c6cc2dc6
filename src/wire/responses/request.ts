/**
 * The tool-call input items of a Responses API request (https://platform.openai.com/docs/api-reference/responses/create)
 * that have a canonical form, as the gateway reads them from a client. A native route passes
 * the request on as it came; no upstream is sent one the gateway wrote.
 */

export type FunctionCallInput = { type: 'function_call'; call_id: string; name: string; arguments: string }
export type FunctionCallOutputInput = { type: 'function_call_output'; call_id: string; output: string }
