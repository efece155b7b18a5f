/**
 * How many consecutive retries a kind of failure gets before the task gives up, with
 * Debezium's counting: `max` retries after the first failed attempt (so max + 1
 * attempts in all), -1 for no limit, 0 for failing at the first error. The count
 * starts again once the work succeeds (reset()), as Debezium's ErrorHandler resets
 * after a poll that returned changes.
 *
 * Keys it stands for: slot.max.retries (a slot another process holds) and
 * errors.max.retries (any other retriable error, such as a lost connection).
 * Owned by one loop; not shared.
 */
export class RetryBudget {
  private used = 0;

  constructor(
    /** The config key the limit comes from, for messages. */
    readonly key: string,
    readonly max: number,
  ) {}

  /** Take one retry; false when none is left (the caller fails). */
  take(): boolean {
    if (this.max !== -1 && this.used >= this.max) return false;
    this.used++;
    return true;
  }

  reset(): void {
    this.used = 0;
  }

  /** The retry just taken, for the trouble detail: "retry 2 of 6 (slot.max.retries)". */
  describe(): string {
    return `retry ${this.used} of ${this.max === -1 ? 'unlimited' : this.max} (${this.key})`;
  }

  /** Why the task gives up: "after 6 retries (slot.max.retries=6)". */
  exhausted(): string {
    return `after ${this.used} ${this.used === 1 ? 'retry' : 'retries'} (${this.key}=${this.max})`;
  }
}
