/**
 * Group commit: many callers waiting for "everything written so far is on disk"
 * share fsyncs instead of each paying one.
 *
 * Rounds run one at a time. A request made while no round runs starts one at once; a
 * request made while a round runs joins the next round, which starts as soon as the
 * running one ends and covers every write made before it starts. So under load, each
 * fsync covers all appends that arrived during the previous fsync, and an append
 * waits for at most two rounds. A failed round rejects exactly its own waiters.
 *
 * Used by PartitionLog on the broker thread; `round` does the actual fsyncs.
 */

interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

function waiters(): Waiters {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export class GroupCommit {
  private next: Waiters | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly round: () => Promise<void>) {}

  /** Resolves when a round that started after this call has completed. */
  request(): Promise<void> {
    if (!this.next) this.next = waiters();
    const promise = this.next.promise;
    if (!this.running) this.running = this.run();
    return promise;
  }

  /** Resolves when no round is running or queued (close, delete). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    while (this.next) {
      const current = this.next;
      this.next = undefined;
      try {
        await this.round();
        current.resolve();
      } catch (e) {
        current.reject(e);
      }
    }
    this.running = undefined;
  }
}
