import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PasswordHasher, paddingMs } from '../../src/account/password-hasher.js';

const { argon2 } = loadConfig({}).passwords;

// Regression: the dummy hash was made by the first unknown-email login and its promise kept even
// when it was refused (queue full) or argon2 failed, so every later unknown email was refused at
// once while known emails were verified.
describe('password hasher: unknown emails take the path of known ones', () => {
  it('with the queue full, verifyDummy is refused exactly like verify; once it drains, both verify', async () => {
    const hasher = await PasswordHasher.create(argon2, 1, 0);
    const stored = await hasher.hash('the real password of someone');
    const busy = hasher.verify(stored, 'a wrong guess');
    const [known, unknown] = await Promise.allSettled([hasher.verify(stored, 'a wrong guess'), hasher.verifyDummy('a wrong guess')]);
    expect(known).toMatchObject({ status: 'rejected', reason: { code: 'rate_limited' } });
    expect(unknown).toEqual(known);
    expect(await busy).toBe(false);
    for (let i = 0; i < 2; i++) {
      expect(await hasher.verifyDummy('a wrong guess')).toBe(false);
      expect(await hasher.verify(stored, 'a wrong guess')).toBe(false);
    }
  });
});

// Regression: after ARGON2_TIME_COST was raised, a wrong password for an account not yet rehashed
// was checked at the old, cheaper cost while unknown emails paid the new one, so login timing told
// those accounts (the dormant ones) from unknown emails.
describe('password hasher: a hash made before the parameters were raised', () => {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const timed = async (check: () => Promise<boolean>) => {
    const started = performance.now();
    await check();
    return performance.now() - started;
  };

  it('was checked in a fraction of the time an unknown email takes: now as long, and still verified and flagged for rehash', async () => {
    const stale = await (await PasswordHasher.create(argon2, 2, 10)).hash('the real password of someone');
    const raised = await PasswordHasher.create({ ...argon2, timeCost: argon2.timeCost * 4 }, 2, 10);
    expect(raised.needsRehash(stale)).toBe(true);
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await timed(() => raised.verify(stale, 'a wrong guess')));
      unknown.push(await timed(() => raised.verifyDummy('a wrong guess')));
    }
    // Unpadded, the stale check takes about a quarter of the unknown email's time.
    expect(median(known)).toBeGreaterThan(0.7 * median(unknown));
    expect(await raised.verify(stale, 'the real password of someone')).toBe(true);
  });

  // Regression: the stale check was padded to a running mean of recent checks, a floor that real
  // checks often go below (argon2's times lean right, so the mean is above the median): the fastest
  // of a few logins then told those accounts from unknown emails, within the login limits.
  it('was padded to a floor that real checks go below: now it lasts as long as one recent check, drawn at random', () => {
    const recent = [90, 95, 100, 105, 180];
    const lasts = recent.map((_, i) => 40 + paddingMs(40, recent, () => i));
    expect(lasts).toEqual(recent);
    expect(Math.min(...lasts)).toBeLessThan(recent.reduce((a, b) => a + b) / recent.length);
    // A check slower than the one drawn is not made slower still.
    expect(paddingMs(150, recent, () => 0)).toBe(0);
    // Drawn with the crypto generator by default: every recent check can be the one.
    const drawn = new Set(Array.from({ length: 400 }, () => paddingMs(0, recent)));
    expect([...drawn].sort((a, b) => a - b)).toEqual(recent);
  });
});
