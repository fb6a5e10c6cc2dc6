import { ALERT_TYPES, type AlertType, type Delivery, get, jsonBody, type Page, query, remove, send, type Webhook } from './api'
import { type Child, field, h, input, notice, show, table } from './dom'
import { time } from './format'

/** What each alert type means, next to its checkbox. */
const EVENT_HINTS: Record<AlertType, string> = {
  'balance.low': 'a wallet or key allotment falls below its low-balance threshold',
  'quota.threshold': "a key's or user's spend in a day, week or month reaches 50, 80 or 100 % of its quota",
  'webhook.test': 'sent on demand with "Send test event"',
}
/** How often the delivery log is read again while one of its deliveries is pending, and for how long at most. */
const REFRESH_MS = 2000
const REFRESH_FOR_MS = 5 * 60_000
/** Deliveries read at a time. */
const PAGE_SIZE = 50

/** A webhook as a person knows it: its description, else its URL. */
function webhookName(webhook: Webhook): string {
  return webhook.description || webhook.url
}

/** Webhooks that receive alerts: the list, the create form, and the selected one's (`?id=`) delivery log. */
export async function webhooksPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const secret = h('div', { 'aria-live': 'polite' })
  const status = h('div', { 'aria-live': 'polite' })
  const list = h('div', {})
  const detail = h('div', {})
  const selectedId = params.get('id') ?? ''
  const refresh = async () => {
    const webhooks = (await get<Page<Webhook>>('/admin/v1/webhooks')).data
    show(list, webhooksTable(webhooks, { status, detail }))
    return webhooks
  }
  show(
    main,
    h('h1', {}, 'Webhooks'),
    h(
      'p',
      { class: 'muted intro' },
      'Receivers of alerts about money, signed in the Standard Webhooks format. Each event is stored before it is sent and retried for over a day until a receiver answers with a 2xx.',
    ),
    secret,
    createForm(secret, () => void refresh()),
    status,
    detail,
    list,
  )
  const webhooks = await refresh()
  const selected = webhooks.find((webhook) => webhook.id === selectedId)
  if (selected) await showDeliveries(detail, selected)
  else if (selectedId) show(detail, notice(`No webhook '${selectedId}': it may have been deleted.`))
}

/** After a create the form is emptied and the secret shown once; `created` redraws the list. */
function createForm(secret: HTMLElement, created: () => void): HTMLElement {
  const url = input('webhook-url', { type: 'url', required: true, maxlength: 2048, autocomplete: 'off' })
  const description = input('webhook-description', { maxlength: 500, placeholder: 'who receives it, e.g. "Billing on-call"' })
  const boxes = ALERT_TYPES.map((type) => h('input', { type: 'checkbox', name: 'webhook-events', value: type, checked: true }))
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (event) => {
        event.preventDefault()
        try {
          const events = boxes.filter((box) => box.checked).map((box) => box.value)
          if (events.length === 0) throw new Error('Choose at least one event.')
          const body = jsonBody({ url: url.value.trim(), events, description: description.value.trim() || undefined })
          const webhook = await send<Webhook>('POST', '/admin/v1/webhooks', body)
          form.reset()
          created()
          showSecret(secret, webhook)
        } catch (error) {
          show(secret, notice(error instanceof Error ? error.message : String(error)))
        }
      },
    },
    h('h2', {}, 'New webhook'),
    h(
      'div',
      { class: 'webhook-form' },
      h(
        'div',
        {},
        field('URL', url, 'http or https; the gateway POSTs each event here.'),
        field('Description', description, 'Names it in the list and log. Optional.'),
      ),
      h(
        'fieldset',
        { class: 'checks' },
        h('legend', {}, 'Events'),
        ...ALERT_TYPES.map((type, index) =>
          h('label', {}, boxes[index], h('span', { class: 'check-text' }, h('code', {}, type), h('small', {}, EVENT_HINTS[type]))),
        ),
      ),
    ),
    h('button', { type: 'submit' }, 'Add webhook'),
  )
  return form
}

function showSecret(secret: HTMLElement, webhook: Webhook): void {
  const value = webhook.secret ?? ''
  const copied = h('span', { class: 'muted', 'aria-live': 'polite' })
  const copy = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(value)
          copied.textContent = 'Copied.'
        } catch {
          copied.textContent = 'The browser refused: select the text and copy it.'
        }
      },
    },
    'Copy',
  )
  show(
    secret,
    h(
      'section',
      { class: 'card secret', role: 'status' },
      h('h2', {}, 'Webhook added: copy its signing secret now'),
      h('p', {}, 'This is the only time the gateway shows it. Your receiver needs it to verify each delivery\u2019s webhook-signature.'),
      h('p', { class: 'secret-row' }, h('code', { 'data-testid': 'webhook-secret' }, value), copy, copied),
      h(
        'p',
        {},
        'For ',
        h('strong', {}, webhookName(webhook)),
        ' ',
        h('button', { type: 'button', class: 'link-button', onclick: () => show(secret) }, 'I have copied it'),
      ),
    ),
  )
  copy.focus()
}

function webhooksTable(webhooks: Webhook[], places: { status: HTMLElement; detail: HTMLElement }): HTMLElement {
  return table(
    'Webhooks, newest first',
    ['Webhook', 'Events', 'Created', ''],
    webhooks.map((webhook): Child[] => [
      h(
        'span',
        { class: 'stack wrap' },
        h('a', { href: `#/webhooks?id=${encodeURIComponent(webhook.id)}` }, h('strong', {}, webhook.description || 'No description')),
        h('code', {}, webhook.url),
      ),
      h('span', { class: 'stack' }, ...webhook.events.map((type) => h('code', {}, type))),
      time(webhook.created_at),
      webhookActions(webhook, places),
    ]),
  )
}

function webhookActions(webhook: Webhook, places: { status: HTMLElement; detail: HTMLElement }): HTMLElement {
  const name = webhookName(webhook)
  return h(
    'span',
    { class: 'actions' },
    h('a', { class: 'button-link secondary', href: `#/webhooks?id=${encodeURIComponent(webhook.id)}`, 'aria-label': `Deliveries to ${name}` }, 'Deliveries'),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-label': `Send a test event to ${name}`,
        onclick: async () => {
          try {
            await send('POST', `/admin/v1/webhooks/${encodeURIComponent(webhook.id)}/test`)
            show(places.status, notice(`Test event queued for ${name}; it is usually sent within a few seconds.`, 'ok'))
            // The log shows the new delivery at once; the address follows without drawing the page again.
            history.replaceState(null, '', `#/webhooks?id=${encodeURIComponent(webhook.id)}`)
            await showDeliveries(places.detail, webhook)
            places.detail.scrollIntoView({ block: 'nearest' })
          } catch (error) {
            show(places.status, notice(error instanceof Error ? error.message : String(error)))
          }
        },
      },
      'Send test event',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Delete ${name}`,
        onclick: async () => {
          if (!confirm(`Delete the webhook "${name}" (${webhook.url})? Its delivery log goes with it, and events it has not been sent yet are dropped.`)) return
          try {
            await remove(`/admin/v1/webhooks/${encodeURIComponent(webhook.id)}`)
            if (location.hash === '#/webhooks') dispatchEvent(new HashChangeEvent('hashchange'))
            else location.hash = '#/webhooks'
          } catch (error) {
            show(places.status, notice(error instanceof Error ? error.message : String(error)))
          }
        },
      },
      'Delete',
    ),
  )
}

/**
 * The webhook's delivery log, newest first, a page at a time. While a delivery on the first page
 * is pending, the first page is read again every few seconds, until none is, older pages are
 * shown, or the panel is gone.
 */
async function showDeliveries(detail: HTMLElement, webhook: Webhook): Promise<void> {
  const list = h('div', {})
  const more = h('div', {})
  const started = Date.now()
  let timer: ReturnType<typeof setTimeout> | undefined
  const firstPage = async (): Promise<void> => {
    clearTimeout(timer)
    const page = await loadDeliveries(list, more, webhook, undefined, () => clearTimeout(timer))
    if (page.data.some((delivery) => delivery.status === 'pending') && Date.now() - started < REFRESH_FOR_MS) {
      timer = setTimeout(() => {
        if (panel.isConnected) firstPage().catch((error) => show(more, notice(error instanceof Error ? error.message : String(error))))
      }, REFRESH_MS)
    }
  }
  const panel = h(
    'section',
    { class: 'card selected', 'aria-label': `Deliveries to ${webhookName(webhook)}` },
    h(
      'div',
      { class: 'toolbar spread' },
      h('h2', {}, 'Deliveries to ', webhookName(webhook)),
      h('button', { type: 'button', class: 'secondary', onclick: () => void firstPage() }, 'Refresh'),
    ),
    webhook.description ? h('p', { class: 'wrap' }, h('code', {}, webhook.url)) : null,
    list,
    more,
  )
  show(detail, panel)
  await firstPage()
}

/** One page of the log: the first replaces what `list` shows, older ones are added below it (`older` runs first). */
async function loadDeliveries(list: HTMLElement, more: HTMLElement, webhook: Webhook, cursor: string | undefined, older: () => void): Promise<Page<Delivery>> {
  const page = await get<Page<Delivery>>(`/admin/v1/webhooks/${encodeURIComponent(webhook.id)}/deliveries${query({ limit: PAGE_SIZE, cursor })}`)
  const drawn = table(
    cursor ? 'Older deliveries' : 'Deliveries, newest first',
    ['Created', 'Type', 'Status', 'Attempts', 'Last answer', 'Last error', 'Delivered'],
    page.data.map((delivery) => [
      time(delivery.created_at),
      h('code', {}, delivery.type),
      h('span', { class: `status status-${delivery.status}`, 'data-testid': 'delivery-status' }, delivery.status),
      delivery.attempts,
      delivery.last_status_code ?? '—',
      delivery.last_error ? h('span', { class: 'wrap error-text' }, delivery.last_error) : '—',
      time(delivery.delivered_at),
    ]),
    [3, 4],
  )
  if (cursor) list.append(drawn)
  else show(list, drawn)
  const next = page.next_cursor ?? undefined
  show(
    more,
    next
      ? h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () => {
              // Reading the first page again would drop the older ones shown.
              older()
              loadDeliveries(list, more, webhook, next, older).catch((error) => show(more, notice(error instanceof Error ? error.message : String(error))))
            },
          },
          'Older deliveries',
        )
      : null,
  )
  return page
}
