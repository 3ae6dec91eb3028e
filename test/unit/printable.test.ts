import { describe, expect, it } from 'vitest';
import { printable } from '../../src/lib/text.js';

/** Client-chosen text shown back later (a session's User-Agent): printable and short, always. */
describe('printable', () => {
  it('keeps ordinary text, trimmed', () => {
    expect(printable('  Mozilla/5.0 (X11; Linux x86_64) ', 256)).toBe('Mozilla/5.0 (X11; Linux x86_64)');
    expect(printable('Ünïcødé 🚀 agent', 256)).toBe('Ünïcødé 🚀 agent');
  });

  it('removes C0, DEL, C1 controls and bidirectional overrides', () => {
    expect(printable('a\u0000b\u001b[2Jc\u007fd\u009be\u202ef\u2066g\r\nh', 256)).toBe('ab[2Jcdefgh');
  });

  it('removes characters that display as nothing: soft hyphen, zero-width space and joiners, BOM', () => {
    expect(printable('a\u00adb\u200bc\u200dd\ufeffe\u2060f', 256)).toBe('abcdef');
  });

  it('cuts to the limit in code points, never inside a surrogate pair, with an ellipsis', () => {
    const cut = printable('🚀'.repeat(300), 256);
    expect([...cut]).toHaveLength(256);
    expect(cut.endsWith('🚀…')).toBe(true);
    expect(printable('x'.repeat(256), 256)).toBe('x'.repeat(256));
  });

  it('looks at a bounded prefix only: a huge value costs what a short one does', () => {
    expect(printable(`${'y'.repeat(2000)}${'z'.repeat(5_000_000)}`, 10)).toBe(`${'y'.repeat(9)}…`);
    expect(printable('\u0001'.repeat(1_000_000), 10)).toBe('');
  });
});
