/**
 * A compacted topic read as a log of key/value updates, the way Kafka Connect's
 * KafkaBasedLog keeps configs, offsets and statuses: every worker reads the whole
 * topic from the beginning (no consumer group, no committed offsets), then keeps
 * tailing it; writes go through a producer and are visible to everyone once read
 * back.
 *
 * One read loop per log owns the partitions' positions: it fetches (long poll) and
 * hands records to `onRecord` in offset order per partition. `readToEnd()` takes the
 * end offsets at the moment of the call and resolves once the loop has delivered
 * everything before them, which is how a worker knows it has seen its own writes and
 * everybody else's before acting.
 *
 * Isolation: reads are read_committed (isolation_level=1 on Fetch and ListOffsets),
 * as Kafka Connect's stores read with exactly-once support: records of aborted
 * transactions are dropped (aborted-transactions.ts), markers are passed over, and the
 * end offsets `readToEnd()` waits for are last stable offsets, so a transaction still
 * open is waited out rather than read. Non-transactional writes are stable as soon as
 * they are appended, so for them nothing changes.
 *
 * Concurrency: the loop is the only caller of onRecord; `stop()` ends the loop and
 * waits for it.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import {
  AbortedTransactionFilter,
  recordsFrom,
} from '../../protocol/client/aborted-transactions.ts';
import { type ClusterClient, KafkaResponseError } from '../../protocol/client/cluster-client.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Logger } from '../../util/logger.ts';

export interface LogRecord {
  partition: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
}

export interface KafkaBasedLogOptions {
  client: ClusterClient;
  topic: string;
  partitions: number;
  onRecord: (record: LogRecord) => void;
  logger: Logger;
  /** Long-poll wait of the tailing fetch. */
  maxWaitMs?: number;
  /**
   * Pause between tailing fetches while nobody waits in readToEnd(), for a log whose
   * readers all go through readToEnd() (the offsets topic): the tail then wakes a few
   * times a second instead of twice per transaction, and a readToEnd() cuts the pause
   * short. Default 0: fetch again at once, for logs whose records act on arrival.
   */
  tailPauseMs?: number;
}

const FETCH_MAX_BYTES = 16 * 1024 * 1024;
const LATEST = -1n;
const RETRY_BACKOFF_MS = 200;

export class KafkaBasedLog {
  private readonly positions: number[];
  private waiters: Array<{ targets: number[]; resolve: () => void; reject: (e: Error) => void }> =
    [];
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();
  /** Ends the read loop's pause between tailing fetches, when it is in one. */
  private wake: (() => void) | undefined;
  /** The read loop's own connections, so its long polls never delay ListOffsets or writes. */
  private readonly fetchClient: ClusterClient;

  constructor(private readonly options: KafkaBasedLogOptions) {
    this.positions = new Array(options.partitions).fill(0);
    this.fetchClient = options.client.fork();
  }

  /** Starts the read loop and resolves once everything written so far has been read. */
  async start(): Promise<void> {
    this.running = true;
    this.loop = this.readLoop();
    await this.readToEnd();
  }

  /** Resolves when every record written before this call has been handed to onRecord. */
  async readToEnd(): Promise<void> {
    const targets = await this.endOffsets();
    if (targets.every((t, p) => this.positions[p]! >= t)) return;
    await new Promise<void>((resolve, reject) => {
      this.waiters.push({ targets, resolve, reject });
      this.wake?.();
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    this.abort.abort();
    this.fetchClient.close();
    await this.loop;
    for (const w of this.waiters.splice(0))
      w.reject(new Error(`log ${this.options.topic} stopped`));
  }

  private async endOffsets(): Promise<number[]> {
    const ends: number[] = new Array(this.options.partitions).fill(0);
    const byLeader = await this.partitionsByConnection(this.options.client);
    for (const [conn, partitions] of byLeader) {
      const answer = await conn.request(ApiKey.ListOffsets, {
        replicaId: -1,
        isolationLevel: 1,
        topics: [
          {
            name: this.options.topic,
            partitions: partitions.map((p) => ({ partitionIndex: p, timestamp: LATEST })),
          },
        ],
      });
      for (const p of (answer.topics as Message[])[0]!.partitions as Message[]) {
        if (p.errorCode !== 0)
          throw new KafkaResponseError(
            p.errorCode,
            `end offset of ${this.options.topic}-${p.partitionIndex}`,
          );
        ends[p.partitionIndex] = Number(p.offset);
      }
    }
    return ends;
  }

  private async partitionsByConnection(client: ClusterClient) {
    const groups = new Map<Awaited<ReturnType<ClusterClient['leaderConnection']>>, number[]>();
    for (let p = 0; p < this.options.partitions; p++) {
      const conn = await client.leaderConnection(this.options.topic, p);
      const list = groups.get(conn) ?? [];
      list.push(p);
      groups.set(conn, list);
    }
    return groups;
  }

  private async readLoop(): Promise<void> {
    while (this.running) {
      try {
        await this.fetchOnce();
        this.settleWaiters();
        await this.pause();
      } catch (err) {
        if (!this.running) break;
        this.options.logger.warn(
          { err, topic: this.options.topic },
          'reading internal topic failed; retrying',
        );
        this.fetchClient.invalidate();
        await new Promise((r) => setTimeout(r, RETRY_BACKOFF_MS));
      }
    }
  }

  private pause(): Promise<void> {
    const ms = this.options.tailPauseMs ?? 0;
    if (ms <= 0 || !this.running || this.waiters.length > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private async fetchOnce(): Promise<void> {
    const byLeader = await this.partitionsByConnection(this.fetchClient);
    // With several leaders (a real cluster), fetch from each in turn; the internal
    // topics are small, so a sequential loop is enough.
    for (const [conn, partitions] of byLeader) {
      const waiting = this.waiters.length > 0;
      const answer = await conn.request(
        ApiKey.Fetch,
        {
          replicaId: -1,
          maxWaitMs: waiting ? 0 : (this.options.maxWaitMs ?? 500),
          minBytes: 1,
          maxBytes: FETCH_MAX_BYTES,
          isolationLevel: 1,
          topics: [
            {
              topic: this.options.topic,
              partitions: partitions.map((p) => ({
                partition: p,
                fetchOffset: BigInt(this.positions[p]!),
                partitionMaxBytes: FETCH_MAX_BYTES,
              })),
            },
          ],
          forgottenTopicsData: [],
        },
        { timeoutMs: 30_000 + (this.options.maxWaitMs ?? 500) },
      );
      if (answer.errorCode)
        throw new KafkaResponseError(answer.errorCode, `fetching ${this.options.topic}`);
      for (const t of answer.responses as Message[]) {
        for (const p of t.partitions as Message[]) this.deliver(p);
      }
      if (!this.running) return;
    }
  }

  private deliver(p: Message): void {
    const partition = p.partitionIndex as number;
    if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      // Compaction or retention moved the start past us: continue from the log start.
      this.positions[partition] = Math.max(this.positions[partition]!, Number(p.logStartOffset));
      return;
    }
    if (p.errorCode !== 0)
      throw new KafkaResponseError(p.errorCode, `fetching ${this.options.topic}-${partition}`);
    const records = p.records as Buffer | null;
    if (!records || records.length === 0) return;
    const filter = AbortedTransactionFilter.forAnswer(
      true,
      p.abortedTransactions as Message[] | null | undefined,
    );
    // Markers and aborted transactions' batches are passed over, never delivered.
    const { records: kept, next } = recordsFrom(records, this.positions[partition]!, filter);
    for (const r of kept ?? []) {
      this.options.onRecord({
        partition,
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key,
        value: r.value,
      });
    }
    this.positions[partition] = next;
  }

  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.targets.every((t, p) => this.positions[p]! >= t)) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }
}
