import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const on = { SMTP_URL: 'smtp://rz:s3cret%21@smtp.example.com:587', MAIL_FROM: '"rz-auth" <no-reply@example.com>', PUBLIC_URL: 'https://auth.example.com' };

describe('mail configuration (SMTP_URL, MAIL_FROM, PUBLIC_URL)', () => {
  it('is off without SMTP_URL, whatever else is set', () => {
    expect(loadConfig({}).mail).toBeNull();
    expect(loadConfig({ MAIL_FROM: 'x', PUBLIC_URL: 'https://auth.example.com' }).mail).toBeNull();
  });

  it('refuses a bad PUBLIC_URL even with mail off: passkeys take their relying party from it too', () => {
    expect(() => loadConfig({ PUBLIC_URL: 'not a url' })).toThrow(/^PUBLIC_URL must be an https:\/\/ URL/);
  });

  it('parses the transport, the sender and the public URL, frozen', () => {
    const { mail } = loadConfig(on);
    expect(mail).toMatchObject({
      from: { name: 'rz-auth', address: 'no-reply@example.com' },
      smtp: { host: 'smtp.example.com', port: 587, implicitTls: false, requireStartTls: true, auth: { user: 'rz', pass: 's3cret!' }, timeoutMs: 30_000 },
    });
    expect(mail?.publicUrl.href).toBe('https://auth.example.com/');
    expect(Object.isFrozen(mail?.smtp)).toBe(true);
    expect(loadConfig({ ...on, SMTP_URL: 'smtps://mx.example.com', MAIL_FROM: 'a@example.com', PUBLIC_URL: 'https://example.com/auth' }).mail).toMatchObject({
      from: { name: '', address: 'a@example.com' },
      smtp: { host: 'mx.example.com', port: 465, implicitTls: true, requireStartTls: false, auth: null },
    });
    expect(loadConfig({ ...on, PUBLIC_URL: 'https://example.com/auth' }).mail?.publicUrl.href).toBe('https://example.com/auth/');
  });

  it('sends from a supervised child process by default; MAIL_WORKER chooses inline or external, and a misspelt value is refused even with mail off', () => {
    expect(loadConfig(on).mail?.worker).toBe('process');
    expect(loadConfig({ ...on, MAIL_WORKER: 'inline' }).mail?.worker).toBe('inline');
    expect(loadConfig({ ...on, MAIL_WORKER: 'External' }).mail?.worker).toBe('external');
    expect(() => loadConfig({ ...on, MAIL_WORKER: 'child' })).toThrow('MAIL_WORKER must be one of process, inline, external, got "child"');
    expect(() => loadConfig({ MAIL_WORKER: 'separate' })).toThrow(/^MAIL_WORKER must be one of/);
  });

  it('allows tls=off and http:// links for a loopback host only', () => {
    expect(loadConfig({ ...on, SMTP_URL: 'smtp://127.0.0.1:2525?tls=off', PUBLIC_URL: 'http://127.0.0.1:3000' }).mail?.smtp).toMatchObject({ requireStartTls: false, port: 2525 });
    expect(loadConfig({ ...on, SMTP_URL: 'smtp://[::1]:2525?tls=off' }).mail?.smtp).toMatchObject({ host: '::1', requireStartTls: false });
    expect(() => loadConfig({ ...on, SMTP_URL: 'smtp://smtp.example.com:25?tls=off' })).toThrow(/^SMTP_URL: tls=off is allowed for a loopback relay only/);
    expect(() => loadConfig({ ...on, SMTP_URL: 'smtp://10.0.0.1:25?tls=off' })).toThrow(/^SMTP_URL/);
    expect(() => loadConfig({ ...on, PUBLIC_URL: 'http://auth.example.com' })).toThrow(/^PUBLIC_URL/);
  });

  it.each([
    [{ PUBLIC_URL: undefined }, /^PUBLIC_URL must be set/],
    [{ MAIL_FROM: undefined }, /^MAIL_FROM must be set/],
    [{ MAIL_FROM: ' ' }, /^MAIL_FROM must be set/],
    [{ SMTP_URL: 'http://smtp.example.com' }, /^SMTP_URL must be/],
    [{ SMTP_URL: 'smtp://' }, /^SMTP_URL must be/],
    [{ SMTP_URL: 'smtp://h.example.com/x' }, /^SMTP_URL must not have a path/],
    [{ SMTP_URL: 'smtp://h.example.com?tls=on' }, /^SMTP_URL/],
    [{ SMTP_URL: 'smtp://h.example.com?pool=true' }, /^SMTP_URL takes no parameter/],
    [{ SMTP_URL: 'smtps://127.0.0.1?tls=off' }, /^SMTP_URL/],
    [{ PUBLIC_URL: 'https://auth.example.com/?next=x' }, /^PUBLIC_URL/],
    [{ PUBLIC_URL: 'https://auth.example.com/#x' }, /^PUBLIC_URL/],
    [{ PUBLIC_URL: 'https://u:p@auth.example.com/' }, /^PUBLIC_URL/],
    [{ PUBLIC_URL: 'ftp://auth.example.com/' }, /^PUBLIC_URL/],
    [{ MAIL_FROM: 'a@example.com, b@example.com' }, /^MAIL_FROM/],
    [{ MAIL_FROM: '"x" <a@example.com>\r\nBcc: b@example.com' }, /^MAIL_FROM/],
    [{ MAIL_FROM: '"x\r\nBcc: b@example.com" <a@example.com>' }, /^MAIL_FROM/],
    [{ MAIL_FROM: 'no-address' }, /^MAIL_FROM/],
    [{ SMTP_TIMEOUT_SECONDS: '0' }, /^SMTP_TIMEOUT_SECONDS/],
  ])('refuses to start naming the variable: %j', (change, message) => {
    expect(() => loadConfig({ ...on, ...change })).toThrow(message);
  });

  it('never repeats the SMTP password in a refusal', () => {
    expect(() => loadConfig({ ...on, SMTP_URL: 'smtp://rz:hunter2@smtp.example.com/path' })).toThrow(/^(?![\s\S]*hunter2)/);
  });
});
