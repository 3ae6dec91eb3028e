/**
 * A tiny element builder. Text is always appended as text nodes and attributes set one by one, so
 * nothing from the API is ever parsed as HTML (the page's CSP also forbids it: trusted-types 'none').
 */
export type Child = Node | string | null | undefined | false;
export type Attrs = Readonly<Record<string, string | number | boolean | null | undefined>>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Element, ...children: Child[]): void {
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) parent.append(child);
  }
}

/** Replaces the children of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** Text only visible to screen readers, e.g. which item a "Revoke" button acts on. */
export const srOnly = (text: string): HTMLSpanElement => h('span', { class: 'sr-only' }, text);

let nextId = 0;
/** A unique element id for label/aria wiring. */
export const uid = (prefix: string): string => `${prefix}-${++nextId}`;

/** Looks up an element that index.html is known to contain. */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`index.html lacks #${id}`);
  return element;
}

/** Moves focus to a heading or container that is not normally focusable, for screen-reader context. */
export function focusHeading(element: HTMLElement): void {
  element.setAttribute('tabindex', '-1');
  element.focus();
}
