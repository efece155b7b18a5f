/**
 * Reading one partition of a Kafka topic from a plugin, the way a Java consumer does
 * after `assign()` (no group membership, no rebalances): for a channel a connector
 * listens on, such as Debezium's signal topic. Built on the runtime's own protocol
 * client, so it works against the embedded broker and a real cluster alike.
 *
 * Position: set by `seek(offset)` (the next offset to read); without one, the first
 * poll takes the group's committed offset (when a group is given), else
 * `autoOffsetReset` (earliest or latest; none throws). `commit(offset)` stores the
 * next offset to read for the group without joining it (generation -1, no member, as
 * Java's commitSync after assign() does), so tools such as kafka-consumer-groups show
 * where the reader is.
 *
 * Reads are read_uncommitted, as a Java consumer's by default; transaction markers are
 * never handed over. A position the log no longer holds (retention, compaction moved
 * the start past it) restarts from `autoOffsetReset`.
 *
 * Concurrency: one caller at a time: no call may start while another is pending.
 * `close()` may be called at any time and makes a pending poll settle promptly
 * (with a ClientClosedError).
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import {
  AbortedTransactionFilter,
  recordsFrom,
} from '../../protocol/client/aborted-transactions.ts';
import {
  ClientClosedError,
  ClusterClient,
  KafkaResponseError,
} from '../../protocol/client/cluster-client.ts';
import { commitGroupOffsets } from '../../protocol/client/group-offsets.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Record as BatchRecord } from '../../protocol/record-batch.ts';

export { ClientClosedError, KafkaResponseError };

export type TopicReaderRecord = BatchRecord;

export interface TopicReaderOptions {
  /** host:port list (a string as bootstrap.servers is written, or its parts). */
  bootstrapServers: string | readonly string[];
  topic: string;
  /** 0 unless given. */
  partition?: number;
  clientId: string;
  /** The group whose committed offset the reader starts from and commits to; null for none. */
  groupId: string | null;
  autoOffsetReset: 'earliest' | 'latest' | 'none';
  /** Most bytes one poll fetches (a larger first batch still comes whole, as in Kafka). */
  maxPartitionFetchBytes?: number;
  /** How long a request may wait for its answer, beyond a poll's own wait. */
  requestTimeoutMs?: number;
}

const DEFAULT_MAX_PARTITION_FETCH_BYTES = 1024 * 1024;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** ListOffsets timestamps: Kafka's EARLIEST and LATEST. */
const EARLIEST = -2n;
const LATEST = -1n;

export class TopicReader {
  private readonly client: ClusterClient;
  private readonly partition: number;
  private next: number | null = null;
  private closed = false;

  constructor(private readonly o: TopicReaderOptions) {
    this.client = new ClusterClient(
      typeof o.bootstrapServers === 'string' ? o.bootstrapServers : [...o.bootstrapServers],
      {
        clientId: o.clientId,
        requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      },
    );
    this.partition = o.partition ?? 0;
  }

  /** The next offset to read, once known (after seek or the first poll). */
  position(): number | null {
    return this.next;
  }

  /** Read from `offset` on (the next offset to read). */
  seek(offset: number): void {
    this.next = offset;
  }

  /**
   * The records at and after the position, waiting up to `maxWaitMs` for one when
   * there are none yet. Throws KafkaResponseError for a broker's refusal (`retriable`
   * says whether polling again can cure it: an unknown topic can, as it may be made).
   */
  async poll(maxWaitMs: number): Promise<TopicReaderRecord[]> {
    if (this.closed) throw new ClientClosedError();
    const from = this.next ?? (await this.startPosition());
    let answer: Message;
    try {
      const conn = await this.client.leaderConnection(this.o.topic, this.partition);
      const maxBytes = this.o.maxPartitionFetchBytes ?? DEFAULT_MAX_PARTITION_FETCH_BYTES;
      answer = await conn.request(
        ApiKey.Fetch,
        {
          replicaId: -1,
          maxWaitMs,
          minBytes: 1,
          maxBytes,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic: this.o.topic,
              partitions: [
                {
                  partition: this.partition,
                  currentLeaderEpoch: -1,
                  fetchOffset: BigInt(from),
                  logStartOffset: -1n,
                  partitionMaxBytes: maxBytes,
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        },
        { timeoutMs: (this.o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) + maxWaitMs },
      );
    } catch (e) {
      this.client.invalidate();
      throw e;
    }
    if (answer.errorCode) throw new KafkaResponseError(answer.errorCode, this.describe('fetching'));
    const p = ((answer.responses as Message[])[0]?.partitions as Message[] | undefined)?.[0];
    if (!p) return [];
    const code = p.errorCode as number;
    if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
      this.next = await this.listOffset(this.resetTimestamp());
      return [];
    }
    if (code !== 0) {
      this.client.invalidate();
      throw new KafkaResponseError(code, this.describe('fetching'));
    }
    return this.records(p, from);
  }

  /** Store `offset` (the next offset to read) as the group's committed offset. */
  async commit(offset: number): Promise<void> {
    const groupId = this.o.groupId;
    if (groupId === null)
      throw new Error(`reader of ${this.describe('')} has no group to commit to`);
    const [refused] = await commitGroupOffsets(this.client, groupId, [
      { topic: this.o.topic, partition: this.partition, offset },
    ]);
    if (refused !== undefined) {
      throw new KafkaResponseError(
        refused.code,
        `committing ${this.describe('')} for group ${groupId}`,
      );
    }
  }

  /** How many partitions the topic has now (0 when it does not exist). */
  async partitionCount(): Promise<number> {
    const [t] = await this.client.metadata([this.o.topic]);
    return t && t.errorCode === 0 ? t.partitions.length : 0;
  }

  close(): void {
    this.closed = true;
    this.client.close();
  }

  private describe(what: string): string {
    return `${what} ${this.o.topic}-${this.partition}`.trim();
  }

  /** The group's committed offset, else the reset position. */
  private async startPosition(): Promise<number> {
    const committed = this.o.groupId === null ? -1 : await this.committed(this.o.groupId);
    this.next = committed >= 0 ? committed : await this.listOffset(this.resetTimestamp());
    return this.next;
  }

  private resetTimestamp(): bigint {
    if (this.o.autoOffsetReset === 'none')
      throw new Error(
        `no position for ${this.describe('')}${this.o.groupId === null ? '' : ` in group ${this.o.groupId}`}, and auto.offset.reset=none`,
      );
    return this.o.autoOffsetReset === 'earliest' ? EARLIEST : LATEST;
  }

  private async committed(groupId: string): Promise<number> {
    const conn = await this.client.coordinatorFor(groupId);
    // v8+ asks per group; v7 is the last with the single-group shape used here.
    const version = Math.min(conn.versionFor(ApiKey.OffsetFetch) ?? 0, 7);
    const answer = await conn.request(
      ApiKey.OffsetFetch,
      {
        groupId,
        topics: [{ name: this.o.topic, partitionIndexes: [this.partition] }],
        requireStable: true,
      },
      { version },
    );
    if (answer.errorCode)
      throw new KafkaResponseError(answer.errorCode, `offsets of group ${groupId}`);
    const p = ((answer.topics as Message[])[0]?.partitions as Message[] | undefined)?.[0];
    if (!p) return -1;
    if (p.errorCode !== 0)
      throw new KafkaResponseError(p.errorCode, `the committed offset of ${this.describe('')}`);
    return Number(p.committedOffset);
  }

  private async listOffset(timestamp: bigint): Promise<number> {
    const conn = await this.client.leaderConnection(this.o.topic, this.partition);
    const answer = await conn.request(ApiKey.ListOffsets, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: this.o.topic,
          partitions: [{ partitionIndex: this.partition, currentLeaderEpoch: -1, timestamp }],
        },
      ],
    });
    const p = ((answer.topics as Message[])[0]!.partitions as Message[])[0]!;
    if (p.errorCode !== 0) {
      this.client.invalidate();
      throw new KafkaResponseError(p.errorCode, this.describe('listing offsets of'));
    }
    return Number(p.offset);
  }

  /** The answer's records at or after `from`; the position moves past every batch read. */
  private records(p: Message, from: number): TopicReaderRecord[] {
    const buf = p.records as Buffer | null;
    if (buf === null || buf.length === 0) return [];
    const { records, next } = recordsFrom(
      buf,
      from,
      AbortedTransactionFilter.forAnswer(false, null),
    );
    this.next = next;
    return records ?? [];
  }
}
