/**
 * The hand-over between the reading side (snapshot reader, replication stream) and
 * the runtime's poll loop: a FIFO of records, bounded by max.queue.size.
 *
 * Back-pressure: the stream pushes without waiting (its callbacks are synchronous),
 * so when the queue reaches its bound `onFull` pauses the socket and `onRoom` resumes
 * it once a poll has taken it below half; what the socket had already buffered still
 * arrives, so the bound is soft by at most one socket read. The snapshot reader awaits
 * `room()` instead. `take()` waits up to poll.interval.ms for the first record and
 * returns at once after close(), which also makes pending and future `room()` reject,
 * ending a snapshot in progress.
 *
 * One producer side and one consumer (poll never overlaps itself); event loop only.
 */
import { type SourceRecord, Wakeup } from '../../../src/connect/api/index.ts';

export class QueueClosedError extends Error {
  readonly kind = 'queue-closed';
  constructor() {
    super('the task is stopping');
    this.name = 'QueueClosedError';
  }
}

export class RecordQueue {
  private items: SourceRecord[] = [];
  private head = 0;
  private paused = false;
  private closed = false;
  private readonly dataArrived = new Wakeup();
  private roomWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];

  constructor(
    private readonly maxSize: number,
    private readonly onFull: () => void = () => undefined,
    private readonly onRoom: () => void = () => undefined,
  ) {}

  get size(): number {
    return this.items.length - this.head;
  }

  push(records: readonly SourceRecord[]): void {
    if (this.closed) return;
    for (const r of records) this.items.push(r);
    if (!this.paused && this.size >= this.maxSize) {
      this.paused = true;
      this.onFull();
    }
    this.dataArrived.wake();
  }

  /** Resolves when the queue is below its bound; rejects once closed. */
  room(): Promise<void> {
    if (this.closed) return Promise.reject(new QueueClosedError());
    if (this.size < this.maxSize) return Promise.resolve();
    return new Promise((resolve, reject) => this.roomWaiters.push({ resolve, reject }));
  }

  /** Up to `max` records; waits up to `waitMs` when empty (not at all once closed). */
  async take(max: number, waitMs: number): Promise<SourceRecord[]> {
    if (this.size === 0 && !this.closed) await this.dataArrived.wait(waitMs);
    const n = Math.min(max, this.size);
    const out = this.items.slice(this.head, this.head + n);
    this.head += n;
    if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.released();
    return out;
  }

  /** Wake a waiting take() without data (e.g. a failure to report). */
  wake(): void {
    this.dataArrived.wake();
  }

  close(): void {
    this.closed = true;
    this.items = [];
    this.head = 0;
    for (const w of this.roomWaiters.splice(0)) w.reject(new QueueClosedError());
    this.dataArrived.wake();
  }

  private released(): void {
    if (this.size < this.maxSize) for (const w of this.roomWaiters.splice(0)) w.resolve();
    // Resume at half, not just below the bound: one resume per half-queue, not per poll.
    if (this.paused && this.size <= this.maxSize / 2) {
      this.paused = false;
      this.onRoom();
    }
  }
}
