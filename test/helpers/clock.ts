import type { Clock } from '../../src/clock.js';

/** A clock tests move by hand: expiry and windows without sleeping. */
export class TestClock implements Clock {
  constructor(private current = Date.parse('2026-11-21T09:30:00.000Z')) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
