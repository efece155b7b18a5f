/**
 * Time is injected wherever behaviour depends on it (segment rolls, retention,
 * session timeouts, rotation), so tests move a ManualClock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private time = 0) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
  set(ms: number): void {
    this.time = ms;
  }
}
