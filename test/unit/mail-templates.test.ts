import { describe, expect, it } from 'vitest';
import { type LinkPurpose, MAIL_TEMPLATES, type MailTemplate } from '../../src/mail/outbox.js';
import { escapeHtml, linkFor, renderMail } from '../../src/mail/templates.js';

const PUBLIC = new URL('https://auth.example.com/base/');
const TOKEN = `rzl_${'A'.repeat(43)}`;
const LINKS: Partial<Record<MailTemplate, LinkPurpose>> = { verify_email: 'verify_email', reset_password: 'reset_password', confirm_email_change: 'change_email' };
const HOSTILE = 'eve\r\nBcc: x@evil.example\r\n\r\n<script>alert(1)</script><a href="https://evil.example/">&amp;</a>';
const data = { username: HOSTILE, new_email: '<img src=x onerror=alert(1)>@example.com', token_name: '"><b>deploy</b>', token_prefix: 'rz_ab<', factor_name: '"><b>phone</b>', locked_until: '<script>x</script>', recovery_codes_remaining: '<img src=x>' };

describe('mail templates (contract §11.3, §11.5)', () => {
  it.each(MAIL_TEMPLATES)('%s: a fixed subject, both parts, every value escaped in the HTML part', (template) => {
    const purpose = LINKS[template];
    const mail = renderMail(template, data, purpose ? linkFor(PUBLIC, purpose, TOKEN) : null, PUBLIC);
    expect(renderMail(template, {}, null, PUBLIC).subject).toBe(mail.subject);
    expect(mail.subject).toMatch(/^[A-Za-z ]+$/);
    expect(mail.text.length).toBeGreaterThan(40);
    expect(mail.html).toMatch(/^<!doctype html>/);
    for (const raw of ['<script>', '<img', '<b>', '<a href="https://evil', '"><b>', 'rz_ab<']) expect(mail.html).not.toContain(raw);
    if (template !== 'token_leaked' && template !== 'email_change_requested' && template !== 'email_changed') expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // No control character survives into either part: a value cannot start a header or a paragraph.
    expect(mail.text).not.toMatch(/eve[\r\n]/);
    const links = [...mail.text.matchAll(/https?:\/\/\S+/g)].map((m) => m[0]);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.startsWith('https://auth.example.com/base/developers')).toBe(true);
    if (purpose) expect(links).toContain(linkFor(PUBLIC, purpose, TOKEN));
    // A notice carries no secret and no link that acts: only the Developers page, which needs a login.
    else expect(links.every((l) => l === 'https://auth.example.com/base/developers')).toBe(true);
  });

  it('puts the token in the fragment under the purpose’s key, never in the path or query', () => {
    expect(linkFor(PUBLIC, 'reset_password', TOKEN)).toBe(`https://auth.example.com/base/developers#reset=${TOKEN}`);
    expect(linkFor(PUBLIC, 'verify_email', TOKEN)).toBe(`https://auth.example.com/base/developers#verify-email=${TOKEN}`);
    expect(linkFor(new URL('https://a.example/'), 'change_email', TOKEN)).toBe(`https://a.example/developers#confirm-email=${TOKEN}`);
  });

  it('escapes the five HTML metacharacters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
