import * as api from '../api.js';
import { confirmAction } from '../confirm.js';
import { focusHeading, h, replace, srOnly, uid } from '../dom.js';
import { describeError, formatDateTime, fromNow } from '../format.js';
import { notify } from '../notices.js';
import { authed, SessionEnded } from '../session.js';
import { listState, loadList, meta, timeOf } from './parts.js';

/** The card listing the user's sessions, and the list's refresh (after a password change, say). */
export interface SessionsCard {
  readonly element: HTMLElement;
  refresh(): Promise<void>;
}

/** How a session is named to a person: its browser (as it introduced itself) and where from. */
const describe = ({ user_agent: agent, ip: from }: api.UserSession): string => `${agent ?? 'Unknown browser'}${from === null ? '' : ` from ${from}`}`;

/** Where the user is signed in: each session with its address and browser, and ending them. */
export function sessionsCard(): SessionsCard {
  const heading = h('h2', { id: uid('sessions-heading'), tabindex: -1 }, 'Where you are signed in');
  const endOthers = h('button', { type: 'button', class: 'button button-danger-quiet', hidden: true }, 'End all other sessions');
  const list = h('div', { class: 'list', 'aria-busy': 'true' });

  const refresh = (): Promise<void> =>
    loadList(list, async () => {
      const { sessions } = await authed((jwt) => api.listSessions(jwt));
      endOthers.hidden = !sessions.some((s) => !s.current);
      replace(list, h('ul', { class: 'items' }, ...sessions.map(item)));
    });

  /** Runs an ending after the person confirmed it, then shows the list again with focus on it. */
  const end = async (question: { title: string; body: string; confirm: string }, call: (jwt: string) => Promise<undefined>, done: string) => {
    if (!(await confirmAction(question))) return;
    try {
      await authed(call);
      notify('success', done);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      notify('error', describeError(error, 'That session had already ended.'));
    }
    await refresh();
    focusHeading(heading);
  };

  function item(session: api.UserSession): HTMLLIElement {
    const name = describe(session);
    const { ip: address } = session;
    let action: HTMLElement;
    if (session.current) {
      action = h('span', { class: 'badge' }, 'This session');
    } else {
      const button = h('button', { type: 'button', class: 'button button-danger-quiet' }, 'End session', srOnly(` ${name}`));
      button.addEventListener('click', () =>
        void end(
          { title: 'End this session?', body: `${name} will be signed out at once and must log in again.`, confirm: 'End session' },
          (jwt) => api.revokeSession(jwt, session.id),
          'Session ended. That browser is signed out.',
        ),
      );
      action = button;
    }
    return h(
      'li',
      { class: session.current ? 'item item-current' : 'item', 'data-session': session.id },
      h(
        'div',
        { class: 'item-main' },
        h('div', { class: 'item-title' }, h('h3', { class: 'user-agent' }, session.user_agent ?? 'Unknown browser')),
        h(
          'dl',
          { class: 'meta' },
          meta('IP address', address ?? 'Unknown'),
          meta('Signed in', timeOf(session.created_at, formatDateTime(session.created_at))),
          meta('Last used', session.last_used_at === null ? 'Not yet' : timeOf(session.last_used_at, fromNow(session.last_used_at))),
        ),
      ),
      h('div', { class: 'item-actions' }, action),
    );
  }

  endOthers.addEventListener('click', () =>
    void end(
      { title: 'End all other sessions?', body: 'Every other browser and device signed in to your account is signed out at once. This one stays signed in.', confirm: 'End other sessions' },
      (jwt) => api.revokeOtherSessions(jwt),
      'Every other session ended. Only this one is signed in.',
    ),
  );

  listState(list, 'Loading your sessions…');
  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': heading.id },
    h('div', { class: 'card-head' }, heading, endOthers),
    h('p', { class: 'muted small card-note' }, 'Each login opens a session. End any you do not recognise, then change your password.'),
    list,
  );
  return { element, refresh };
}
