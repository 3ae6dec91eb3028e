import type { ScopeInfo, ScopeTokenType } from './api.js';
import { h, replace, uid } from './dom.js';
import { describeError } from './format.js';
import { type FieldView, groupField } from './forms.js';
import { loadScopes, scopesFor } from './scopes.js';

export interface ScopePicker extends FieldView {
  readonly element: HTMLElement;
  /** The names checked, in the catalogue's order. */
  value(): string[];
  /** Resolves once the catalogue is shown: with the scopes offered (none hides the picker when `hideWhenEmpty`). */
  readonly ready: Promise<readonly ScopeInfo[]>;
}

function checkbox(scope: ScopeInfo): HTMLElement {
  const id = uid('scope');
  const input = h('input', { type: 'checkbox', id, name: 'scopes', value: scope.name, 'aria-describedby': `${id}-grants` });
  const grants = h('p', { id: `${id}-grants`, class: 'hint' }, scope.description, scope.builtin ? null : h('span', { class: 'scope-origin' }, ' Platform scope.'));
  return h('div', { class: 'check' }, input, h('label', { for: id }, h('code', {}, scope.name)), grants);
}

/**
 * Checkboxes for the scopes a token of `type` may be given, each with what it grants, from
 * GET /api/scopes. While it loads it says so; if it cannot load, it says why and offers to retry.
 */
export function scopePicker(type: ScopeTokenType, legend: string, hint: string, hideWhenEmpty = false): ScopePicker {
  const list = h('div', { class: 'scope-list' });
  const group = groupField(legend, hint, list);
  const show = async (): Promise<readonly ScopeInfo[]> => {
    replace(list, h('p', { class: 'muted small' }, 'Loading scopes…'));
    try {
      const offered = scopesFor(await loadScopes(), type);
      if (offered.length > 0) replace(list, ...offered.map(checkbox));
      else replace(list, h('p', { class: 'muted small' }, 'No scopes are available for this kind of token.'));
      group.element.hidden = hideWhenEmpty && offered.length === 0;
      return offered;
    } catch (error) {
      const retry = h('button', { type: 'button', class: 'button button-small' }, 'Try again');
      retry.addEventListener('click', () => void show());
      replace(list, h('p', { class: 'field-error' }, `The scopes could not be loaded. ${describeError(error)}`), retry);
      return [];
    }
  };
  return {
    element: group.element,
    get focusTarget() {
      return group.focusTarget;
    },
    setError: group.setError,
    value: () => [...list.querySelectorAll<HTMLInputElement>('input[name="scopes"]:checked')].map((i) => i.value),
    ready: show(),
  };
}

/** A token's scopes as chips, or what having none means. */
export function scopeChips(scopes: readonly string[], none: string): HTMLElement {
  if (scopes.length === 0) return h('p', { class: 'muted small' }, none);
  return h('ul', { class: 'chips', 'aria-label': 'Scopes' }, ...scopes.map((s) => h('li', {}, h('code', {}, s))));
}
