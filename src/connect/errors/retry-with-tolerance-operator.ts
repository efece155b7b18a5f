/**
 * RetryWithToleranceOperator: Kafka Connect's error handling for one task.
 *
 *   - `executeAsync` runs an asynchronous operation; a RetriableException is retried
 *     with exponential back-off (300 ms doubling, capped by errors.retry.delay.max.ms)
 *     until errors.retry.timeout (0: never, -1: forever). The task runners do not use
 *     it yet: poll and put retry on their own terms, as the task contracts say
 *     (forever, after a back-off), as Kafka Connect does.
 *   - `execute` runs a synchronous per-record stage (converter, transform). It does
 *     not retry (a retry would need a wait on the per-record hot path): a
 *     RetriableException from a converter or transform counts as a failure. A failure
 *     is either tolerated
 *     (errors.tolerance=all: reported to the log and DLQ reporters, the record skipped:
 *     the call returns `skipped`) or fatal (ToleranceExceededError, the task fails with
 *     the original error as its cause).
 *   - Reports are asynchronous (the DLQ produces); they are collected and awaited by
 *     `awaitReports()`, which the sink runner calls before committing offsets.
 *
 * Owned by one task runner; not shared. Sleeps go through an injected `sleep`, which
 * ends early when the task stops (then the operation is abandoned as a failure).
 */
import { ConnectException, errorKind } from '../api/errors.ts';
import type { ErrorHandlingConfig } from './error-handling-config.ts';
import type { ErrorReporter, ProcessingContext } from './processing-context.ts';

const INITIAL_RETRY_DELAY_MS = 300;

export class ToleranceExceededError extends ConnectException {
  constructor(context: ProcessingContext, cause: unknown) {
    super(
      `Tolerance exceeded in error handler (stage ${context.stage}, class ${context.className})`,
      {
        cause,
      },
    );
    this.name = 'ToleranceExceededError';
  }
}

/** The record part of a ProcessingContext. */
export type RecordContext = Omit<ProcessingContext, 'stage' | 'className'>;

export const skipped: unique symbol = Symbol('skipped');
export type Skipped = typeof skipped;

export interface OperatorDeps {
  now(): number;
  /** Wait `ms`; resolves false when the task is stopping (give up). */
  sleep(ms: number): Promise<boolean>;
}

export class RetryWithToleranceOperator {
  private reports: Promise<void>[] = [];
  private reportError: unknown;
  /** Records skipped so far (for metrics and tests). */
  toleratedErrors = 0;

  constructor(
    private readonly config: ErrorHandlingConfig,
    private readonly reporters: readonly ErrorReporter[],
    private readonly deps: OperatorDeps,
  ) {}

  get toleratesAll(): boolean {
    return this.config.toleranceAll;
  }

  /**
   * Run a synchronous stage; `skipped` when its failure was tolerated. The context is
   * given in parts and assembled only on failure: this runs several times per record.
   */
  execute<T>(
    stage: ProcessingContext['stage'],
    className: string,
    record: RecordContext,
    operation: () => T,
  ): T | Skipped {
    try {
      return operation();
    } catch (e) {
      // Read, not spread: a record context may make `consumed` on demand (a getter).
      const { consumed, sourceRecord } = record;
      return this.tolerate({ stage, className, consumed, sourceRecord }, e);
    }
  }

  /** Run an asynchronous operation with retries; `skipped` when its failure was tolerated. */
  async executeAsync<T>(
    context: ProcessingContext,
    operation: () => Promise<T>,
  ): Promise<T | Skipped> {
    const start = this.deps.now();
    let delay = INITIAL_RETRY_DELAY_MS;
    for (;;) {
      try {
        return await operation();
      } catch (e) {
        const timeout = this.config.retryTimeoutMs;
        const elapsed = this.deps.now() - start;
        const canRetry =
          errorKind(e) === 'retriable' && (timeout === -1 || (timeout > 0 && elapsed < timeout));
        if (!canRetry) return this.tolerate(context, e);
        const wait =
          timeout === -1
            ? Math.min(delay, this.config.retryDelayMaxMs)
            : Math.min(delay, this.config.retryDelayMaxMs, Math.max(0, timeout - elapsed));
        if (!(await this.deps.sleep(wait))) return this.tolerate(context, e);
        delay *= 2;
      }
    }
  }

  /** Tolerate (report and skip) or throw ToleranceExceededError. */
  tolerate(context: ProcessingContext, error: unknown): Skipped {
    if (!this.config.toleranceAll) throw new ToleranceExceededError(context, error);
    this.toleratedErrors++;
    const err = error instanceof Error ? error : new Error(String(error));
    this.report(context, err);
    return skipped;
  }

  /** Report a failure without deciding anything (errant record reporter, KIP-610). */
  report(context: ProcessingContext, error: Error): Promise<void> {
    const done = Promise.all(this.reporters.map((r) => r.report(context, error))).then(
      () => {},
      (e: unknown) => {
        this.reportError ??= e;
      },
    );
    this.reports.push(done);
    return done;
  }

  /** Wait for every report so far; throws if one failed (the DLQ write was lost). */
  async awaitReports(): Promise<void> {
    const pending = this.reports;
    this.reports = [];
    await Promise.all(pending);
    if (this.reportError !== undefined) {
      const e = this.reportError;
      this.reportError = undefined;
      throw new ConnectException('Writing a failed record to the dead letter queue failed', {
        cause: e,
      });
    }
  }
}
