/** A tiny element builder: the console draws each view as plain DOM, no framework. */
export type Child = Node | string | number | null | undefined | false | Child[]
export type Attribute = string | number | boolean | null | undefined | ((event: Event) => void)

export function h<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  attributes: Record<string, Attribute> = {},
  ...children: Child[]
): HTMLElementTagNameMap[Tag] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value)
    else if (name === 'value' && 'value' in element) element.value = String(value)
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  append(element, children)
  return element
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(parent, child)
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

/** Replaces what `parent` shows. */
export function show(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, children)
}

/** A labelled input; the label names it for screen readers and tests alike. */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement, hint?: string): HTMLElement {
  return h('label', { class: 'field' }, h('span', {}, label), input, hint ? h('small', {}, hint) : null)
}

export function input(name: string, attributes: Record<string, Attribute> = {}): HTMLInputElement {
  return h('input', { name, id: `field-${name}`, ...attributes })
}

export function select(name: string, options: readonly (string | [string, string])[], value = ''): HTMLSelectElement {
  const element = h(
    'select',
    { name, id: `field-${name}` },
    ...options.map((option) => {
      const [optionValue, text] = typeof option === 'string' ? [option, option] : option
      return h('option', { value: optionValue }, text)
    }),
  )
  if (value) element.value = value
  return element
}

/**
 * A table in a horizontally scrolling frame; on a phone each row becomes a block of labelled
 * lines (each cell carries its column's name for the style sheet).
 */
export function table(caption: string, headers: readonly string[], rows: readonly Child[][], numeric: readonly number[] = []): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, ...headers.map((header, index) => h('th', { scope: 'col', class: numeric.includes(index) ? 'num' : undefined }, header)))),
      h(
        'tbody',
        {},
        rows.length === 0
          ? h('tr', {}, h('td', { colspan: headers.length, class: 'empty' }, 'None.'))
          : rows.map((row) =>
              h(
                'tr',
                {},
                ...row.map((cell, index) => h('td', { class: numeric.includes(index) ? 'num' : undefined, 'data-label': headers[index] || undefined }, cell)),
              ),
            ),
      ),
    ),
  )
}

/** A message the screen reader announces; errors in red. */
export function notice(text: string, kind: 'error' | 'ok' = 'error'): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text)
}
