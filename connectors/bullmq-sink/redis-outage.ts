/**
 * How long Redis has been failing, and what the task does about it: Kafka Connect's
 * `errors.retry.timeout` (0: fail at the first failure, -1: retry forever, else retry
 * for that many ms) and `errors.retry.delay.max.ms` (cap of the back-off, which starts
 * at 300 ms and doubles), applied to Redis round trips, which the runtime's operator
 * does not cover (it retries a put forever). While retrying the task stays RUNNING with
 * the outage in its status trace; past the timeout it fails, naming the last error.
 * Time comes from the task context's clock.
 */
import { type Clock, ConnectException, RetriableException } from '../../src/connect/api/index.ts';

const INITIAL_BACKOFF_MS = 300;

export interface OutagePolicy {
  retryTimeoutMs: number;
  retryDelayMaxMs: number;
}

/** The two runtime keys, from the task config (the strings the user gave). */
export function outagePolicy(config: Readonly<Record<string, string>>): OutagePolicy {
  const num = (key: string, fallback: number) => {
    const t = config[key]?.trim();
    return t === undefined || t === '' || !Number.isFinite(Number(t)) ? fallback : Number(t);
  };
  return {
    retryTimeoutMs: num('errors.retry.timeout', 0),
    retryDelayMaxMs: num('errors.retry.delay.max.ms', 60_000),
  };
}

export class RedisOutage {
  private since: number | undefined;
  private attempts = 0;

  constructor(
    private readonly policy: OutagePolicy,
    private readonly clock: Clock,
    private readonly where: string,
    private readonly report: (detail: string | null) => void,
    private readonly setBackoff: (ms: number) => void,
  ) {}

  /** A round trip succeeded: the outage, if any, is over. */
  recovered(): void {
    if (this.since === undefined) return;
    this.since = undefined;
    this.attempts = 0;
    this.report(null);
  }

  /** A round trip failed: the exception to throw from put (retriable, or fatal past the timeout). */
  failed(error: unknown): Error {
    const now = this.clock.now();
    this.since ??= now;
    this.attempts++;
    const elapsed = now - this.since;
    const message = (error as Error)?.message ?? String(error);
    const { retryTimeoutMs, retryDelayMaxMs } = this.policy;
    if (retryTimeoutMs >= 0 && elapsed >= retryTimeoutMs) {
      return new ConnectException(
        `Redis at ${this.where} failing for ${elapsed} ms (${this.attempts} attempts), beyond errors.retry.timeout=${retryTimeoutMs}: ${message}`,
        { cause: error },
      );
    }
    let backoff = Math.min(INITIAL_BACKOFF_MS * 2 ** (this.attempts - 1), retryDelayMaxMs);
    if (retryTimeoutMs >= 0) backoff = Math.max(1, Math.min(backoff, retryTimeoutMs - elapsed));
    this.setBackoff(backoff);
    this.report(
      `Redis at ${this.where} unavailable since ${new Date(this.since).toISOString()} (attempt ${this.attempts}): ${message}; retrying in ${backoff} ms${
        retryTimeoutMs >= 0 ? `, failing after errors.retry.timeout=${retryTimeoutMs} ms` : ''
      }`,
    );
    return new RetriableException(`Redis at ${this.where} unavailable: ${message}`, {
      cause: error,
    });
  }
}
