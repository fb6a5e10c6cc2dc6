import type { StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import type { StreamEncoder } from '../../dispatch/surface'
import type { GatewayError } from '../../errors/gateway-error'
import { responsesFailure } from '../../errors/render'
import type { SseEvent } from '../../streaming/sse'
import { outputItemOf } from '../../wire/responses/content'
import type { OutputItem, ResponsesEventFields, ResponsesEventType } from '../../wire/responses/response'
import { responsesUsageOf } from '../../wire/responses/usage'
import { responseIds, responseObject } from './encode'

interface OpenItem {
  kind: 'message' | 'function_call' | 'reasoning'
  id: string
  index: number
  text: string
  callId?: string
  name?: string
}

/**
 * Canonical stream parts as the Responses event sequence (docs/upstreams.md#openai-responses-api): response.created and
 * response.in_progress, then per output item output_item.added, its deltas (output_text,
 * reasoning_text, function_call_arguments) and their done events, output_item.done, and finally
 * response.completed (or incomplete) with the usage and cost. Every event has a sequence_number.
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  private readonly id = responseIds.response()
  private readonly createdAt = Math.floor(Date.now() / 1000)
  private sequence = 0
  private readonly done: OutputItem[] = []
  private open: OpenItem | undefined

  constructor(private readonly model: string) {}

  encode(part: StreamPart): SseEvent[] {
    switch (part.type) {
      case 'start': {
        const response = responseObject({ id: this.id, model: this.model, createdAt: this.createdAt, output: [], status: 'in_progress' })
        return [this.event('response.created', { response }), this.event('response.in_progress', { response })]
      }
      case 'text-delta':
        return [...this.openItem('message'), ...this.delta(part.text)]
      case 'reasoning-delta':
        return [...this.openItem('reasoning'), ...this.delta(part.text)]
      case 'tool-call-start':
        return [
          ...this.closeItem(),
          ...this.startItem({ kind: 'function_call', id: responseIds.functionCall(), index: this.done.length, text: '', callId: part.id, name: part.name }),
        ]
      case 'tool-call-delta':
        return this.delta(part.argumentsDelta)
      default:
        return []
    }
  }

  finish(part: Extract<StreamPart, { type: 'finish' }>, usage: Usage, cost: number): SseEvent[] {
    const closing = this.closeItem()
    const response = responseObject({
      id: this.id,
      model: this.model,
      createdAt: this.createdAt,
      output: this.done,
      finishReason: part.finishReason,
      usage: responsesUsageOf(usage, cost),
    })
    return [...closing, this.event(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response })]
  }

  failure(error: GatewayError): SseEvent[] {
    const response = {
      ...responseObject({ id: this.id, model: this.model, createdAt: this.createdAt, output: this.done, status: 'failed' }),
      error: responsesFailure(error),
    }
    return [this.event('response.failed', { response })]
  }

  private openItem(kind: 'message' | 'reasoning'): SseEvent[] {
    if (this.open?.kind === kind) return []
    const id = kind === 'message' ? responseIds.message() : responseIds.reasoning()
    return [...this.closeItem(), ...this.startItem({ kind, id, index: this.done.length, text: '' })]
  }

  private startItem(item: OpenItem): SseEvent[] {
    this.open = item
    const added: OutputItem =
      item.kind === 'message'
        ? { type: 'message', id: item.id, status: 'in_progress', role: 'assistant', content: [] }
        : item.kind === 'reasoning'
          ? { type: 'reasoning', id: item.id, summary: [] }
          : { type: 'function_call', id: item.id, call_id: item.callId ?? '', name: item.name ?? '', arguments: '', status: 'in_progress' }
    const events = [this.event('response.output_item.added', { output_index: item.index, item: added })]
    if (item.kind === 'message') {
      events.push(
        this.event('response.content_part.added', {
          item_id: item.id,
          output_index: item.index,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [] },
        }),
      )
    }
    return events
  }

  private closeItem(): SseEvent[] {
    const item = this.open
    if (!item) return []
    this.open = undefined
    const at = { item_id: item.id, output_index: item.index }
    // A function call's arguments are the JSON text as streamed, not re-serialised.
    const final: OutputItem =
      item.kind === 'function_call'
        ? { type: 'function_call', id: item.id, call_id: item.callId ?? '', name: item.name ?? '', arguments: item.text, status: 'completed' }
        : outputItemOf(item.kind === 'message' ? { type: 'text', text: item.text } : { type: 'reasoning', text: item.text }, item.id)
    this.done.push(final)
    const events: SseEvent[] = []
    if (item.kind === 'message') {
      events.push(this.event('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] }))
      events.push(this.event('response.content_part.done', { ...at, content_index: 0, part: { type: 'output_text', text: item.text, annotations: [] } }))
    } else if (item.kind === 'reasoning') {
      events.push(this.event('response.reasoning_text.done', { ...at, content_index: 0, text: item.text }))
    } else {
      events.push(this.event('response.function_call_arguments.done', { ...at, name: item.name ?? '', arguments: item.text }))
    }
    events.push(this.event('response.output_item.done', { output_index: item.index, item: final }))
    return events
  }

  /** A delta of the open item, in its kind's event; none when no item is open (arguments for a call that never started). */
  private delta(delta: string): SseEvent[] {
    const item = this.open
    if (!item) return []
    item.text += delta
    const at = { item_id: item.id, output_index: item.index }
    switch (item.kind) {
      case 'message':
        return [this.event('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] })]
      case 'reasoning':
        return [this.event('response.reasoning_text.delta', { ...at, content_index: 0, delta })]
      case 'function_call':
        return [this.event('response.function_call_arguments.delta', { ...at, delta })]
    }
  }

  private event<T extends ResponsesEventType>(type: T, data: ResponsesEventFields[T]): SseEvent {
    return { event: type, data: JSON.stringify({ type, sequence_number: this.sequence++, ...data }) }
  }
}
