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
  readonly partition: SourcePartition;
  readonly offset: SourceOffset;
  acked: boolean;
  /** Its source partition's queue. */
  readonly queue: PartitionQueue;
}

export interface CommittableOffsets {
  /** Per source partition (by key), the offset safe to commit. */
  readonly offsets: Map<string, { partition: SourcePartition; offset: SourceOffset }>;
  /** Acknowledged records removed from the queues since the last call. */
  readonly committed: number;
  /** Records still waiting behind an unacknowledged one (or unacknowledged themselves). */
  readonly uncommitted: number;
  /** The source partition with the most waiting records, for the log line. */
  readonly largestQueue?: { partition: SourcePartition; size: number };
}

/**
 * One source partition's records in submission order. The acknowledged prefix is
 * collapsed as acknowledgements arrive, into the last record of it (`done`): only
 * records from the first unacknowledged one on are kept. Between two offset commits
 * (offset.flush.interval.ms) a fast task submits hundreds of thousands of records;
 * keeping them all until the commit held their offsets long enough to reach V8's old
 * generation, which dominated the worker's heap and its garbage collection.
 */
interface PartitionQueue {
  readonly key: string;
  /** Records from `head` on; the slots before it are emptied as the head advances. */
  readonly records: Array<SubmittedRecord | undefined>;
  head: number;
  /** The last record of the acknowledged prefix not yet taken by committableOffsets(). */
  done: SubmittedRecord | undefined;
  /** How many records that prefix had. */
  doneCount: number;
}

/** Emptied slots at the front of a queue's array before it is compacted. */
const COMPACT_AFTER = 4096;

export class SubmittedRecords {
  private readonly queues = new Map<string, PartitionQueue>();
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
    let queue = this.queues.get(partitionKey);
    if (queue === undefined) {
      queue = { key: partitionKey, records: [], head: 0, done: undefined, doneCount: 0 };
      this.queues.set(partitionKey, queue);
    }
    const record: SubmittedRecord = { partition, offset, acked: false, queue };
    queue.records.push(record);
    this.pending++;
    return record;
  }

  ack(record: SubmittedRecord): void {
    if (record.acked) return;
    record.acked = true;
    this.pending--;
    const queue = record.queue;
    if (queue.records[queue.head] === record) advance(queue);
    if (this.pending === 0) this.wakeWaiters();
  }

  /**
   * Forget a record that was never sent (its send failed before reaching the broker),
   * so it does not block the queue. Only the last submitted record of its partition
   * may be removed, and only while unacknowledged; otherwise the record stays and
   * blocks, which is the safe choice.
   */
  remove(record: SubmittedRecord): boolean {
    if (record.acked) return false;
    const queue = record.queue;
    const { records } = queue;
    if (this.queues.get(queue.key) !== queue) return false;
    if (records.length <= queue.head || records[records.length - 1] !== record) return false;
    records.pop();
    this.pending--;
    this.dropIfIdle(queue);
    if (this.pending === 0) this.wakeWaiters();
    return true;
  }

  /** Number of submitted records the broker has not acknowledged yet. */
  get unacknowledged(): number {
    return this.pending;
  }

  /** Take the committable offsets: per partition, the end of its acknowledged prefix. */
  committableOffsets(): CommittableOffsets {
    const offsets = new Map<string, { partition: SourcePartition; offset: SourceOffset }>();
    let committed = 0;
    let uncommitted = 0;
    let largestQueue: { partition: SourcePartition; size: number } | undefined;
    for (const queue of this.queues.values()) {
      const done = queue.done;
      if (done !== undefined) {
        offsets.set(queue.key, { partition: done.partition, offset: done.offset });
        committed += queue.doneCount;
        queue.done = undefined;
        queue.doneCount = 0;
      }
      const waiting = queue.records.length - queue.head;
      if (waiting === 0) {
        this.dropIfIdle(queue);
        continue;
      }
      uncommitted += waiting;
      if (largestQueue === undefined || waiting > largestQueue.size) {
        const first = queue.records[queue.head] as SubmittedRecord;
        largestQueue = { partition: first.partition, size: waiting };
      }
    }
    return { offsets, committed, uncommitted, ...(largestQueue ? { largestQueue } : {}) };
  }

  private dropIfIdle(queue: PartitionQueue): void {
    if (queue.records.length === queue.head && queue.done === undefined) {
      this.queues.delete(queue.key);
    }
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

/** Moves the queue's head past its acknowledged records, into `done`. */
function advance(queue: PartitionQueue): void {
  const { records } = queue;
  let head = queue.head;
  while (head < records.length && (records[head] as SubmittedRecord).acked) {
    queue.done = records[head];
    records[head] = undefined;
    queue.doneCount++;
    head++;
  }
  if (head === records.length) {
    records.length = 0;
    head = 0;
  } else if (head >= COMPACT_AFTER && head * 2 >= records.length) {
    records.splice(0, head);
    head = 0;
  }
  queue.head = head;
}
