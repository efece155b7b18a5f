/**
 * Runs async jobs one at a time, in submission order: how a task runner keeps its
 * promise that calls on one task instance never overlap, while the calls come from
 * different sources (fetched batches, the commit timer, rebalance callbacks). A
 * failing job rejects its own promise only; the queue goes on.
 */
export class SerialExecutor {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(job);
    this.tail = next.catch(() => {});
    return next;
  }

  /** Resolves once every job submitted so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => {});
  }
}
