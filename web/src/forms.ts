import { ApiError } from './api.js';
import { h, srOnly, uid, type Child } from './dom.js';
import { describeError, sentence } from './format.js';
import { SessionEnded } from './session.js';

/** Anything in a form that can show an error: an input, a select, a group of checkboxes. */
export interface FieldView {
  /** Focused when this field is the first with an error. */
  readonly focusTarget: HTMLElement;
  setError(message: string | null): void;
}

/** An error paragraph wired to `control` through aria-describedby and aria-invalid. */
function errorSlot(control: HTMLElement, describedBy: readonly string[]): { element: HTMLParagraphElement; set(message: string | null): void } {
  const element = h('p', { id: uid('error'), class: 'field-error', hidden: true });
  const set = (message: string | null) => {
    element.textContent = message ?? '';
    element.hidden = message === null;
    const ids = message === null ? describedBy : [...describedBy, element.id];
    if (ids.length > 0) control.setAttribute('aria-describedby', ids.join(' '));
    else control.removeAttribute('aria-describedby');
    if (message === null) control.removeAttribute('aria-invalid');
    else control.setAttribute('aria-invalid', 'true');
  };
  set(null);
  return { element, set };
}

export interface TextFieldOptions {
  readonly label: string;
  readonly name: string;
  readonly type?: 'text' | 'email' | 'password' | 'date';
  readonly hint?: Child;
  readonly autocomplete?: string;
  readonly required?: boolean;
  /**
   * The most characters the server takes. The input's maxlength is twice that: browsers count
   * UTF-16 units (an emoji is two), so any text the server accepts gets through; past that the
   * server says why.
   */
  readonly maxChars?: number;
  readonly multiline?: boolean;
  readonly spellcheck?: boolean;
  readonly inputmode?: string;
}

export interface TextField extends FieldView {
  readonly element: HTMLDivElement;
  readonly control: HTMLInputElement | HTMLTextAreaElement;
  readonly value: string;
}

/** A labelled text input (or textarea) with an optional hint and an error slot. */
export function textField(options: TextFieldOptions): TextField {
  const id = uid(options.name);
  const hint = options.hint ? h('p', { id: `${id}-hint`, class: 'hint' }, options.hint) : null;
  const attrs = {
    id,
    name: options.name,
    autocomplete: options.autocomplete ?? 'off',
    required: options.required ?? false,
    'aria-required': options.required ? 'true' : null,
    maxlength: options.maxChars === undefined ? null : 2 * options.maxChars,
    spellcheck: options.spellcheck === undefined ? null : String(options.spellcheck),
    inputmode: options.inputmode ?? null,
    autocapitalize: options.type === 'email' || options.spellcheck === false ? 'off' : null,
  };
  const control = options.multiline ? h('textarea', { ...attrs, rows: 3 }) : h('input', { ...attrs, type: options.type ?? 'text' });
  const error = errorSlot(control, hint ? [hint.id] : []);
  const label = h('label', { for: id }, options.label, options.required ? null : h('span', { class: 'optional' }, ' (optional)'));
  const row = options.type === 'password' ? h('div', { class: 'input-row' }, control, revealButton(control as HTMLInputElement, options.label)) : control;
  const element = h('div', { class: 'field' }, label, hint, row, error.element);
  return {
    element,
    control,
    focusTarget: control,
    get value() {
      return control.value;
    },
    setError: error.set,
  };
}

/** "Show" / "Hide" for a password, so a long passphrase can be checked before it is sent. */
function revealButton(input: HTMLInputElement, label: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'button reveal', 'aria-pressed': 'false', 'aria-controls': input.id }, 'Show', srOnly(` ${label.toLowerCase()}`));
  button.addEventListener('click', () => {
    const show = input.type === 'password';
    input.type = show ? 'text' : 'password';
    button.setAttribute('aria-pressed', String(show));
    button.firstChild?.replaceWith(show ? 'Hide' : 'Show');
  });
  return button;
}

/**
 * Runs `action` on a click, one run at a time: a click while it runs is ignored, so a double click
 * never creates two of anything. aria-disabled rather than disabled, so focus stays put.
 */
export function onClickOnce(button: HTMLButtonElement, action: () => Promise<void>): void {
  let running = false;
  button.addEventListener('click', () => {
    if (running) return;
    running = true;
    button.setAttribute('aria-disabled', 'true');
    void action().finally(() => {
      running = false;
      button.removeAttribute('aria-disabled');
    });
  });
}

/** A fieldset whose error is announced with its legend. */
export function groupField(legend: string, hint: Child, ...controls: Child[]): FieldView & { element: HTMLFieldSetElement } {
  const id = uid('group');
  const hintElement = h('p', { id: `${id}-hint`, class: 'hint' }, hint);
  const element = h('fieldset', { id, class: 'field group' }, h('legend', {}, legend), hintElement, ...controls);
  const error = errorSlot(element, [hintElement.id]);
  element.append(error.element);
  return {
    element,
    get focusTarget(): HTMLElement {
      return element.querySelector('input, select') ?? element;
    },
    setError: error.set,
  };
}

/**
 * A form's state: busy while a request runs, field errors from a validation problem placed next
 * to their fields, anything else in one alert at the top of the form.
 */
export class FormController {
  readonly alert = h('div', { class: 'form-error', role: 'alert', hidden: true });
  private pending = false;

  constructor(
    readonly form: HTMLFormElement,
    private readonly fields: Readonly<Record<string, FieldView>>,
    private readonly submitButton: HTMLButtonElement,
  ) {
    form.noValidate = true;
    form.prepend(this.alert);
  }

  clear(): void {
    for (const field of Object.values(this.fields)) field.setError(null);
    this.alert.hidden = true;
    this.alert.textContent = '';
  }

  /**
   * Marks the form busy while a request runs. The button is aria-disabled rather than disabled so
   * that a keyboard user who pressed it keeps focus on it.
   */
  busy(on: boolean, label?: string): void {
    const idle = this.submitButton.dataset.label ?? this.submitButton.textContent ?? '';
    this.submitButton.dataset.label = idle;
    this.pending = on;
    this.submitButton.setAttribute('aria-disabled', String(on));
    this.submitButton.textContent = on && label ? label : idle;
    this.form.setAttribute('aria-busy', String(on));
  }

  /** Runs `submit` on each submission (one at a time); whatever it throws is shown by {@link fail}. */
  onSubmit(busyLabel: string, submit: () => Promise<void>): void {
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (this.pending) return;
      this.clear();
      this.busy(true, busyLabel);
      submit()
        .catch((error: unknown) => this.fail(error))
        .finally(() => this.busy(false));
    });
  }

  /** Client-side checks, e.g. a required field left empty. Returns false when any failed. */
  check(errors: Readonly<Record<string, string | null>>): boolean {
    let first: FieldView | null = null;
    for (const [name, message] of Object.entries(errors)) {
      const field = this.fields[name];
      if (!field || message === null) continue;
      field.setError(message);
      first ??= field;
    }
    first?.focusTarget.focus();
    return first === null;
  }

  /**
   * Shows a failed call. Validation errors go next to their fields (`scopes.1` belongs to
   * `scopes`); the rest, and every other failure, in plain words at the top of the form.
   */
  fail(error: unknown, notFound?: string): void {
    if (error instanceof SessionEnded) return;
    const unplaced: string[] = [];
    let first: FieldView | null = null;
    if (error instanceof ApiError && error.status < 500 && error.fieldErrors.length > 0) {
      for (const { field, message } of error.fieldErrors) {
        const view = this.fields[field.split('.')[0] ?? field];
        if (view) {
          view.setError(sentence(message));
          first ??= view;
        } else {
          unplaced.push(`${field} ${message}`);
        }
      }
    }
    if (first === null) {
      this.showAlert(describeError(error, notFound));
    } else if (unplaced.length > 0) {
      this.showAlert(`Please correct the highlighted fields. Also: ${unplaced.join('; ')}.`);
    } else {
      this.showAlert('Please correct the highlighted fields.');
    }
    (first?.focusTarget ?? this.alert).focus();
  }

  showAlert(message: string): void {
    this.alert.textContent = message;
    this.alert.hidden = false;
    this.alert.setAttribute('tabindex', '-1');
  }
}
