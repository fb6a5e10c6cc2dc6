import { describe, expect, test } from 'bun:test'
import { convertPromptToChat } from '../../src/providers/openai/convert-request'
import { decodeResponsesRequest } from '../../src/surfaces/responses/decode'

/** Golden cases: a Responses API request as the chat request a chat-only route receives. */
describe('responses request -> chat completions request', () => {
  test('instructions and developer messages, images, function calls and outputs, hosted tools dropped', () => {
    const chat = convertPromptToChat(
      decodeResponsesRequest({
        instructions: 'Be brief.',
        input: [
          { role: 'developer', content: 'Answer in English.' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is in this picture?' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0K' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look it up.' }] },
          { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"cat"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'a cat' },
        ],
        tools: [{ type: 'function', name: 'lookup', description: 'Search', parameters: { type: 'object' } }, { type: 'web_search' }],
        tool_choice: 'required',
        max_output_tokens: 200,
      }),
      'max_tokens',
    )
    expect(chat).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.\n\nAnswer in English.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look it up.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Search', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      max_tokens: 200,
    })
  })
})
