import type { Prompt } from '../../src/canonical/prompt'

/** One conversation every adapter translates: a system line, a tool call and its result, tools, sampling. */
export const PROMPT: Prompt = {
  system: 'Be brief.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: 'Sunny, 21 C' }] },
  ],
  tools: [{ name: 'get_weather', description: 'Current weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
  toolChoice: { type: 'auto' },
  maxOutputTokens: 256,
  temperature: 0.2,
  stopSequences: ['END'],
  stream: false,
}
