/*
 * The links rz-auth mails carry their token in the URL fragment (contract §11.3:
 * `/developers#reset=<token>`), which no request sends to a server. Here it is taken out of the
 * address bar before anything else runs, so it never stays in history, a bookmark, a screenshot of
 * the address bar or a link copied from it; the page keeps it in memory until it is used.
 */

/** What a mail's link asks for. */
export type LinkKind = 'reset' | 'verify-email' | 'confirm-email';

export interface EmailLink {
  readonly kind: LinkKind;
  readonly token: string;
}

const LINK = /^#(reset|verify-email|confirm-email)=(.*)$/s;

/**
 * The link in the current fragment, if the fragment is one, which is then replaced (not pushed:
 * Back must not bring it back) by the bare page address. Called at start-up and on every
 * hashchange, since a link pasted into an open tab only changes the fragment.
 */
export function takeLink(): EmailLink | null {
  const match = LINK.exec(location.hash);
  if (match === null) return null;
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  const raw = match[2] ?? '';
  let token = raw;
  try {
    token = decodeURIComponent(raw);
  } catch {
    // Not percent-encoded text: sent as it came, and the server answers invalid_link.
  }
  return { kind: match[1] as LinkKind, token };
}
