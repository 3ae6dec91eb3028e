import { describe, expect, it } from 'vitest';
import { invalidToken, ProblemError } from '../../src/errors.js';

const FRAME = /\n\s+at /;

describe('ProblemError stacks', () => {
  it('a client error captures no stack frames (nothing reads them; a 401 flood paid for them)', () => {
    expect(invalidToken().stack).not.toMatch(FRAME);
    expect(new ProblemError('validation_failed').stack).not.toMatch(FRAME);
    expect(new ProblemError('rate_limited').stack).not.toMatch(FRAME);
  });

  it('a server error keeps its stack for the logs', () => {
    expect(new ProblemError('internal').stack).toMatch(FRAME);
    expect(new ProblemError('unavailable').stack).toMatch(FRAME);
  });

  it('leaves Error.stackTraceLimit as it found it', () => {
    const before = Error.stackTraceLimit;
    invalidToken();
    new ProblemError('internal');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('plain').stack).toMatch(FRAME);
  });
});

describe('ProblemError fields', () => {
  it('a validation error that names no field names the request (the contract: validation errors name each bad field)', () => {
    expect(new ProblemError('validation_failed').errors).toEqual([{ field: 'request', message: 'is not valid' }]);
    expect(new ProblemError('validation_failed', { errors: [{ field: 'name', message: 'is required' }] }).errors).toEqual([{ field: 'name', message: 'is required' }]);
    expect(new ProblemError('not_found').errors).toBeUndefined();
  });
});
