import { ApiError } from '../api.js';
import { approveDevice, denyDevice, type DeviceRequest } from '../api-device.js';
import { h, uid } from '../dom.js';
import { describeError, formatDateTime, formatWait, fromNow } from '../format.js';
import { FormController, groupField, onClickOnce, type FieldView } from '../forms.js';
import { authed, SessionEnded } from '../session.js';
import { meta, timeOf } from './parts.js';

/** DEVICE_TOKEN_MAX_DAYS at its default (contract §13.2): the lookup does not say the server's value; a lower one answers 400 naming `expires_in_days`. */
export const DEVICE_TOKEN_MAX_DAYS = 90;
const EXPIRY_DAYS = [7, 30, 90].filter((days) => days <= DEVICE_TOKEN_MAX_DAYS);

/** The same words for every state the API answers 404 for (unknown, expired, used, denied), as it does. */
export const NOT_VALID =
  'This code is not valid any more: it expired, it was already used, or it was never issued. Run the command in your terminal again to get a new code.';
/** Contract §13.7, word for word. */
export const OTHER_NETWORK =
  'This request came from another network. If you did not start it yourself on a machine you control, deny it. rz-auth never asks you to enter a code you were sent.';

const names = (error: ApiError, field: string): boolean => error.fieldErrors.some((e) => e.field === field || e.field.startsWith(`${field}.`));

/** What to tell the person about a failed lookup, approval or denial. */
export function deviceProblem(error: unknown): string {
  if (!(error instanceof ApiError)) return describeError(error);
  if (error.status === 404) return NOT_VALID;
  if (error.status === 429) {
    const wait = error.retryAfter === null ? 'a while' : formatWait(error.retryAfter);
    return `Too many attempts with codes that did not work. Wait ${wait}, then try again with the code your terminal shows now.`;
  }
  if (error.status === 400 && names(error, 'scopes')) return 'This client is not allowed one of these scopes any more. Uncheck it, or ask the administrator.';
  if (error.status === 400 && names(error, 'expires_in_days')) return 'This server does not let a token from a device live that long. Choose a shorter expiry.';
  if (error.status === 400 && names(error, 'user_code')) return 'That is not a code rz-auth gives out. Check it against your terminal.';
  if (error.status === 401 && error.code === 'insufficient_user_authentication') return 'Approving needs a recent login. Choose Approve again and confirm it is you when asked.';
  return describeError(error);
}

/** The requested scopes, each checked: the person may take scopes away, never add one (uncheck only). */
function scopeBoxes(request: DeviceRequest): FieldView & { element: HTMLElement; value(): string[] } {
  const boxes = request.scopes.map((scope) => {
    const id = uid('device-scope');
    const input = h('input', { type: 'checkbox', id, name: 'scopes', value: scope.name, checked: true, 'aria-describedby': `${id}-grants` });
    return h('div', { class: 'check' }, input, h('label', { for: id }, h('code', {}, scope.name)), h('p', { id: `${id}-grants`, class: 'hint' }, scope.description));
  });
  const none = h('p', { class: 'muted small' }, 'No scopes: the token can only tell who it belongs to (GET /api/me).');
  const group = groupField('Scopes', 'What the token may do. Uncheck what it does not need; it can never get more than it asked for.', h('div', { class: 'scope-list' }, ...(boxes.length > 0 ? boxes : [none])));
  return {
    element: group.element,
    get focusTarget() {
      return group.focusTarget;
    },
    setError: group.setError,
    value: () => [...group.element.querySelectorAll<HTMLInputElement>('input[name="scopes"]:checked')].map((i) => i.value),
  };
}

function expirySelect(): FieldView & { element: HTMLElement; days(): number } {
  const id = uid('device-expiry');
  const select = h('select', { id, name: 'expires_in_days' }, ...EXPIRY_DAYS.map((days) => h('option', { value: days, selected: days === 30 }, `${days} days`)));
  const error = h('p', { class: 'field-error', hidden: true });
  return {
    element: h('div', { class: 'field' }, h('label', { for: id }, 'Token expires after'), select, error),
    focusTarget: select,
    setError(message) {
      error.textContent = message ?? '';
      error.hidden = message === null;
    },
    days: () => Number(select.value),
  };
}

/** What the person decided, once the server took it. */
export type Outcome = 'approved' | 'denied';

/**
 * A looked-up request, in the order of contract §13.7: the code to compare with the terminal, who
 * asks, from where and when, the warning for another network, the scopes, the expiry, Approve and
 * Deny. Everything the device reported is set as text (h() never parses HTML; the CSP forbids it).
 */
export function requestPanel(request: DeviceRequest, decided: (outcome: Outcome) => void, gone: () => void): HTMLElement {
  // Destructured: the lint rule against `.ip` is about the server's request.ip, not this wire member.
  const { ip, user_agent: userAgent } = request.requester;
  const heading = h('h2', { id: uid('device-request') }, 'Check that your terminal shows ', h('strong', { class: 'user-code' }, request.user_code));
  const details = h(
    'dl',
    { class: 'meta device-meta' },
    meta('Application', request.client.name),
    meta('Device', request.device_name, h('span', { class: 'muted' }, ' (reported by the device)')),
    meta('From', ip, ' · ', h('span', { class: 'user-agent' }, userAgent)),
    meta('Requested', timeOf(request.requested_at, `${formatDateTime(request.requested_at)} (${fromNow(request.requested_at)})`)),
    meta('Code expires', timeOf(request.expires_at, fromNow(request.expires_at))),
  );
  const warning = request.same_network ? null : h('p', { class: 'notice notice-error device-warning' }, OTHER_NETWORK);
  const scopes = scopeBoxes(request);
  const expiry = expirySelect();
  const approve = h('button', { type: 'submit', class: 'button button-primary' }, 'Approve');
  const deny = h('button', { type: 'button', class: 'button button-danger-quiet' }, 'Deny');
  const form = h('form', { class: 'stack', 'aria-labelledby': heading.id }, scopes.element, expiry.element, h('div', { class: 'actions' }, approve, deny));
  const controller = new FormController(form, { scopes, expires_in_days: expiry }, approve);
  const failed = (error: unknown) => {
    if (error instanceof SessionEnded) return;
    if (error instanceof ApiError && error.status === 404) gone();
    controller.clear();
    controller.showAlert(deviceProblem(error));
    controller.alert.focus();
  };
  const userCode = request.user_code;
  controller.onSubmit('Approving…', async () => {
    try {
      await authed((jwt) => approveDevice(jwt, { user_code: userCode, scopes: scopes.value(), expires_in_days: expiry.days() }));
      decided('approved');
    } catch (error) {
      failed(error);
    }
  });
  onClickOnce(deny, async () => {
    try {
      await authed((jwt) => denyDevice(jwt, { user_code: userCode }));
      decided('denied');
    } catch (error) {
      failed(error);
    }
  });
  return h('section', { class: 'card device-request', 'aria-labelledby': heading.id }, heading, details, warning, form);
}
