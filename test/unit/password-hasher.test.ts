import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PasswordHasher } from '../../src/users/hasher.js';

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
