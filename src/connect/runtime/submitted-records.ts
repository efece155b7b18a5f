/**
 * SubmittedRecords: which source offsets are safe to commit, as Kafka Connect's class of
 * the same name decides it.
 *
 * Every record a source task polled is submitted in poll order, before it is sent; the
 * broker acknowledges records in any order across partitions and sends. Per source
 * partition, records wait in a queue in submission order. The committable offset of a
 * source partition is the offset of the last record of the longest acknowledged prefix
 * of its queue: never past the first record the broker has not acknowledged, so a
 * crash after the commit cannot lose an unacknowledged record. Records a transform
 * dropped are submitted and acknowledged at once (their offsets still advance).
 *
 * Single owner: the task runner's loop and the producer acknowledgement callbacks, all
 * on the one event loop; nothing here awaits.
 */
import type { SourceOffset, SourcePartition } from '../api/connect-record.ts';
import { offsetKey } from './offset-keys.ts';

export interface SubmittedRecord {
  readonly partitionKey: string;
  readonly partition: SourcePartition;
  readonly offset: SourceOffset;
  acked: boolean;
}

export interface CommittableOffsets {
  /** Per source partition (by key), the offset safe to commit. */
  readonly offsets: Map<string, { partition: SourcePartition; offset: SourceOffset }>;
  /** Acknowledged records removed from the queues by this call. */
  readonly committed: number;
  /** Records still waiting behind an unacknowledged one (or unacknowledged themselves). */
  readonly uncommitted: number;
  /** The source partition with the most waiting records, for the log line. */
  readonly largestQueue?: { partition: SourcePartition; size: number };
}

export class SubmittedRecords {
  private readonly queues = new Map<string, SubmittedRecord[]>();
  private pending = 0;
  private waiters: Array<() => void> = [];
  /**
   * Serialized keys by partition object: tasks usually return one partition object
   * for a whole poll, and serializing it for every record would dominate the cost.
   */
  private keyCache = new WeakMap<SourcePartition, string>();

  constructor(private readonly connector: string) {}

  submit(partition: SourcePartition, offset: SourceOffset): SubmittedRecord {
    let partitionKey = this.keyCache.get(partition);
    if (partitionKey === undefined) {
      partitionKey = offsetKey(this.connector, partition);
      this.keyCache.set(partition, partitionKey);
    }
    const record: SubmittedRecord = { partitionKey, partition, offset, acked: false };
    let queue = this.queues.get(partitionKey);
    if (queue === undefined) {
      queue = [];
      this.queues.set(partitionKey, queue);
    }
    queue.push(record);
    this.pending++;
    return record;
  }

  ack(record: SubmittedRecord): void {
    if (record.acked) return;
    record.acked = true;
    this.pending--;
    if (this.pending === 0) this.wakeWaiters();
  }

  /**
   * Forget a record that was never sent (its send failed before reaching the broker),
   * so it does not block the queue. Only the last submitted record of its partition
   * may be removed; otherwise the record stays and blocks, which is the safe choice.
   */
  remove(record: SubmittedRecord): boolean {
    const queue = this.queues.get(record.partitionKey);
    if (queue === undefined || queue[queue.length - 1] !== record) return false;
    queue.pop();
    if (!record.acked) this.pending--;
    if (queue.length === 0) this.queues.delete(record.partitionKey);
    if (this.pending === 0) this.wakeWaiters();
    return true;
  }

  /** Number of submitted records the broker has not acknowledged yet. */
  get unacknowledged(): number {
    return this.pending;
  }

  /** Take the committable offsets, dropping the acknowledged prefix of every queue. */
  committableOffsets(): CommittableOffsets {
    const offsets = new Map<string, { partition: SourcePartition; offset: SourceOffset }>();
    let committed = 0;
    let uncommitted = 0;
    let largestQueue: { partition: SourcePartition; size: number } | undefined;
    for (const [key, queue] of this.queues) {
      let n = 0;
      while (n < queue.length && (queue[n] as SubmittedRecord).acked) n++;
      if (n > 0) {
        const last = queue[n - 1] as SubmittedRecord;
        offsets.set(key, { partition: last.partition, offset: last.offset });
        queue.splice(0, n);
        committed += n;
      }
      if (queue.length === 0) {
        this.queues.delete(key);
        continue;
      }
      uncommitted += queue.length;
      if (largestQueue === undefined || queue.length > largestQueue.size) {
        largestQueue = { partition: (queue[0] as SubmittedRecord).partition, size: queue.length };
      }
    }
    return { offsets, committed, uncommitted, ...(largestQueue ? { largestQueue } : {}) };
  }

  /** Resolves true once every submitted record is acknowledged, false after `timeoutMs`. */
  awaitAllAcknowledged(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
