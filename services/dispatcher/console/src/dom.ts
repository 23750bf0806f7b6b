// The one way the console puts anything on a page: elements built node by node, text always as text
// nodes (never innerHTML), attributes from a fixed list. Whatever a device id, token, topic or title
// holds is shown, never run.

export type Child = Node | string | number | null | undefined | false | Child[];

const ATTRIBUTES = new Set([
  'id', 'class', 'type', 'name', 'value', 'placeholder', 'for', 'role', 'href', 'accept', 'autocomplete',
  'min', 'max', 'step', 'tabindex', 'scope', 'title', 'lang', 'spellcheck', 'inputmode', 'datetime',
]);

export interface Props {
  [attribute: string]: string | number | boolean | undefined | ((event: Event) => void);
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      if (!name.startsWith('on')) throw new Error(`not an event: ${name}`);
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name.startsWith('aria-') || name.startsWith('data-') || ATTRIBUTES.has(name)) {
      if (name === 'href' && !String(value).startsWith('#/')) throw new Error('links stay inside the console');
      element.setAttribute(name, value === true ? '' : String(value));
    } else if (name === 'required' || name === 'disabled' || name === 'checked' || name === 'readonly' || name === 'multiple') {
      element.setAttribute(name, '');
    } else {
      throw new Error(`attribute not allowed: ${name}`);
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A labelled form field: every input has a visible label tied to it. */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  if (!input.id) input.id = `f-${Math.random().toString(36).slice(2, 10)}`;
  const hintId = hint ? `${input.id}-hint` : undefined;
  if (hintId) input.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input,
    hint ? h('small', { id: hintId }, hint) : null);
}

export function select(name: string, options: [string, string][], selected?: string): HTMLSelectElement {
  const element = h('select', { name });
  for (const [value, label] of options) {
    const option = h('option', { value }, label);
    if (value === selected) option.selected = true;
    element.appendChild(option);
  }
  return element;
}

export function table(caption: string, headers: string[], rows: Child[][]): HTMLElement {
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
    h('table', {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, headers.map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, rows.length === 0
        ? h('tr', {}, spanning(headers.length, 'Nothing here yet.'))
        : rows.map((cells) => h('tr', {}, cells.map((cell) => h('td', {}, cell)))))));
}

export function when(instant: string | undefined | null): string {
  if (!instant) return '—';
  const date = new Date(instant);
  return Number.isNaN(date.getTime()) ? String(instant) : date.toLocaleString();
}

export function time(instant: string | undefined | null): Child {
  return instant ? h('time', { datetime: instant }, when(instant)) : '—';
}

export function badge(state: string): HTMLElement {
  return h('span', { class: `badge state-${state.replace(/[^a-z_]/g, '')}` }, state);
}

function spanning(columns: number, text: string): HTMLTableCellElement {
  const cell = h('td', { class: 'empty' }, text);
  cell.colSpan = columns;
  return cell;
}
