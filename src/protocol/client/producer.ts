/**
 * An idempotent producer (acks=all) on the protocol client: the Java producer's
 * delivery rules without its accumulator, for callers that already batch (the Connect
 * runtime's source tasks hand over a whole request's worth of records per send).
 *
 * One send -> records partitioned (explicit partition, else the Java client's murmur2
 * of the key, else round-robin) -> one v2 batch per partition with the next sequence
 * numbers of that partition -> one Produce request per leader, written at once.
 * Up to `maxInFlight` sends (Kafka's max.in.flight.requests.per.connection, 5, which is
 * also the broker's window of remembered batches per producer) are in flight together,
 * so encoding the next request overlaps the broker appending the previous one.
 *
 * Ordering and retries: sends are prepared in call order and settle in call order.
 * A batch that fails with a retriable error (or whose connection dies) is resent with
 * the same bytes, hence the same sequence numbers, but only after every earlier send
 * has settled, so a partition's batches reach the broker in sequence order; later
 * batches that the broker refused as out of order meanwhile are resent after it in
 * turn. A resent batch that had in fact been appended is answered as a duplicate with
 * its original offsets. A second out-of-order answer after every earlier send settled
 * is a real gap and fails the send, as do non-retriable errors and running past
 * `deliveryTimeoutMs`. After a failed send the producer refuses further sends: its
 * sequences can no longer be trusted, and the caller starts a new producer (or calls
 * init() again: a new epoch starts the sequences over).
 *
 * transactional-producer.ts extends this class through its protected hooks: where the
 * producer id comes from, the transactional id Produce carries, and a gate each send's
 * requests may have to wait for (AddPartitionsToTxn). A gated send still takes its
 * sequence numbers in call order; its requests are written once the gate opens, and
 * after every earlier send to one of its partitions has been written, so a
 * partition's batches still reach the broker in sequence order, while sends to other
 * partitions are written at once, past it.
 */

import { type BufferLease, BufferPool } from '../../util/buffer-pool.ts';
import { ApiKey } from '../api-keys.ts';
import type { Message } from '../codec.ts';
import { CompressionCodec } from '../compression.ts';
import { ErrorCode } from '../error-codes.ts';
import { encodeBatch, type RecordHeader } from '../record-batch.ts';
import type { BrokerConnection } from './broker-connection.ts';
import { type ClusterClient, KafkaResponseError, notRetriable } from './cluster-client.ts';
import { keyPartition } from './partitioner.ts';

export interface ProducerRecord {
  readonly topic: string;
  /** Null: the partitioner chooses. */
  readonly partition: number | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Null: the send time. */
  readonly timestamp: number | null;
  readonly headers: readonly RecordHeader[];
}

/** Where one record was written. offset is -1 when the broker did not say (an old duplicate). */
export interface RecordAck {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
}

export interface ProducerOptions {
  codec?: CompressionCodec;
  /** KIP-390's level for `codec` (compression.<codec>.level); undefined: the codec's default. */
  compressionLevel?: number;
  /** The Produce request's timeout, and how long to wait for its answer (request.timeout.ms). */
  requestTimeoutMs?: number;
  /** How long a send may keep retrying before it fails (delivery.timeout.ms). */
  deliveryTimeoutMs?: number;
  /** Pause before a retry (retry.backoff.ms). */
  retryBackoffMs?: number;
  /** Sends in flight at once (max.in.flight.requests.per.connection, at most 5). */
  maxInFlight?: number;
  /** Let the broker create missing topics on the metadata request (allow.auto.create.topics). */
  allowAutoTopicCreation?: boolean;
  /** How long partition counts are trusted before they are looked up again (metadata.max.age.ms). */
  metadataMaxAgeMs?: number;
  /** Told about each retry, for logging. */
  onRetry?(reason: Error): void;
}

interface PartitionAnswer {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: number;
  logAppendTime: number;
}

interface PartitionBatch {
  readonly topic: string;
  readonly partition: number;
  readonly bytes: Buffer;
  /** The lease `bytes` is written in, given back once the batch is acknowledged. */
  readonly lease: BufferLease;
  /** Positions in the send's record list, in batch order. */
  readonly indexes: number[];
  answer: Promise<PartitionAnswer>;
  baseOffset: number;
  logAppendTime: number;
}

interface PartitionGroup {
  readonly topic: string;
  readonly partition: number;
  /** Positions in the send's record list. */
  readonly indexes: number[];
}

interface Job {
  readonly records: readonly ProducerRecord[];
  readonly sentAt: number;
  readonly batches: PartitionBatch[];
  /** Settles once the batches' requests are written; undefined: written before prepare returned. */
  readonly written: Promise<void> | undefined;
}

const MAX_SEQUENCE = 0x7fffffff;
export class IdempotentProducer {
  private producerId = -1;
  private producerEpoch = -1;
  private readonly sequences = new Map<string, number>();
  private readonly partitionCounts = new Map<string, { count: number; at: number }>();
  private roundRobin = 0;
  private inFlight = 0;
  private slotFreed: (() => void) | null = null;
  /** Settles when the last send so far has been prepared (written to the sockets). */
  private prepared: Promise<unknown> = Promise.resolve();
  /** Settles when the last send so far has settled. */
  private settled: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;
  /**
   * Gated sends not written yet, by partition (`topic\0partition`): a later send to
   * the partition is written after them. Empty unless the subclass gates sends.
   */
  private readonly unwritten = new Map<string, Promise<void>>();
  /**
   * Batch buffers reused from send to send: without reuse every request's batch (up
   * to max.request.size) is garbage once answered, ~170 MB/s of ArrayBuffers at CDC
   * rates, a large part of a worker's peak RSS. One per request in flight, and the
   * one being encoded.
   */
  private readonly buffers: BufferPool;
  private readonly o: Required<Omit<ProducerOptions, 'onRetry' | 'compressionLevel'>> &
    Pick<ProducerOptions, 'onRetry' | 'compressionLevel'>;

  constructor(
    private readonly client: ClusterClient,
    options: ProducerOptions = {},
  ) {
    this.o = {
      codec: CompressionCodec.none,
      requestTimeoutMs: 30_000,
      deliveryTimeoutMs: 120_000,
      retryBackoffMs: 100,
      maxInFlight: 5,
      allowAutoTopicCreation: true,
      metadataMaxAgeMs: 300_000,
      ...options,
    };
    if (this.o.maxInFlight < 1 || this.o.maxInFlight > 5) {
      throw new Error(
        `max.in.flight.requests.per.connection must be between 1 and 5 for an idempotent producer, not ${this.o.maxInFlight}`,
      );
    }
    this.buffers = new BufferPool({ maxFreePerSize: this.o.maxInFlight + 1 });
  }

  /** Gets a producer id from the cluster (InitProducerId); call once before sending. */
  async init(): Promise<void> {
    if (this.closed) throw new Error('producer is closed');
    const { producerId, producerEpoch } = await this.initProducerId();
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    // A new id or epoch starts every partition's sequence at 0 again.
    this.sequences.clear();
    this.failure = undefined;
  }

  /** This producer's id and epoch, once init() has run; -1 before. */
  get identity(): { producerId: number; producerEpoch: number } {
    return { producerId: this.producerId, producerEpoch: this.producerEpoch };
  }

  /**
   * InitProducerId for an idempotent producer (no transactional id), from any broker.
   * The transactional producer asks its transaction coordinator instead.
   */
  protected async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    const deadline = Date.now() + this.o.deliveryTimeoutMs;
    for (;;) {
      let error: Error;
      try {
        const conn = await this.client.anyConnection();
        const answer = await conn.request(ApiKey.InitProducerId, {
          transactionalId: null,
          transactionTimeoutMs: 60_000,
          producerId: -1n,
          producerEpoch: -1,
        });
        if (answer.errorCode === 0) {
          return {
            producerId: Number(answer.producerId),
            producerEpoch: answer.producerEpoch as number,
          };
        }
        error = new KafkaResponseError(answer.errorCode, 'InitProducerId');
        if (!(error as KafkaResponseError).retriable) throw error;
      } catch (e) {
        if (notRetriable(e)) throw e;
        error = e as Error;
      }
      if (Date.now() > deadline) throw error;
      this.o.onRetry?.(error);
      await sleep(this.o.retryBackoffMs);
    }
  }

  /**
   * Sends records and resolves with where each was written, in input order, once the
   * whole send is acknowledged by all in-sync replicas. Sends settle in call order.
   */
  send(records: readonly ProducerRecord[]): Promise<RecordAck[]> {
    const sentAt = Date.now();
    const job = this.prepared.then(() => this.prepare(records, sentAt));
    this.prepared = job.catch(() => undefined);
    const previous = this.settled;
    const acks = job.then((j) => this.complete(j, previous));
    this.settled = acks.catch(() => undefined);
    return acks;
  }

  close(): void {
    this.closed = true;
    this.failure ??= new Error('producer is closed');
    this.client.close();
  }

  /**
   * Called once per send, in send order, with the partitions it writes, before its
   * batches are encoded (not for resends). Undefined: the send's requests are written
   * at once; a promise: they are written once it resolves, and the send fails with
   * its rejection. A throw fails the send before it takes sequence numbers. The
   * transactional producer adds new partitions to its transaction here
   * (AddPartitionsToTxn must precede the data).
   */
  protected beforeDispatch(
    _partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<void> | undefined {
    return undefined;
  }

  /** The transactional id Produce requests carry and batches are marked for; null: none. */
  protected get transactionalId(): string | null {
    return null;
  }

  /** The first failure of a send, which every later send refuses with; undefined while healthy. */
  protected get sendFailure(): Error | undefined {
    return this.failure;
  }

  /** Resolves once every send so far has settled (acknowledged or failed). */
  protected flush(): Promise<void> {
    return this.settled.then(() => undefined);
  }

  private async prepare(records: readonly ProducerRecord[], sentAt: number): Promise<Job> {
    if (this.failure) throw this.failure;
    if (this.producerId < 0) throw new Error('producer is not initialised: call init() first');
    const counts = new Map<string, number>();
    for (const r of records) {
      if (!counts.has(r.topic)) counts.set(r.topic, await this.partitionCount(r.topic, sentAt));
    }

    // Per topic, the partitions' groups in first-seen order (no per-record string keys).
    const groups: PartitionGroup[] = [];
    const byTopic = new Map<string, PartitionGroup[]>();
    let lastTopic: string | undefined;
    let lastGroups: PartitionGroup[] = [];
    let count = 0;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      if (r.topic !== lastTopic) {
        lastTopic = r.topic;
        count = counts.get(r.topic)!;
        let topicGroups = byTopic.get(r.topic);
        if (topicGroups === undefined) {
          topicGroups = [];
          byTopic.set(r.topic, topicGroups);
        }
        lastGroups = topicGroups;
      }
      let partition = r.partition;
      if (partition === null) {
        if (count === 1) partition = 0;
        else if (r.key !== null) partition = keyPartition(r.key, count);
        else partition = (this.roundRobin++ & 0x7fffffff) % count;
      } else if (partition < 0 || partition >= count) {
        throw new Error(
          `partition ${partition} of topic ${r.topic} does not exist: the topic has ${count} partitions`,
        );
      }
      let group = lastGroups[partition];
      if (group === undefined) {
        group = { topic: r.topic, partition, indexes: [] };
        lastGroups[partition] = group;
        groups.push(group);
      }
      group.indexes.push(i);
    }

    while (this.inFlight >= this.o.maxInFlight) {
      await new Promise<void>((resolve) => {
        this.slotFreed = resolve;
      });
    }
    if (this.failure) throw this.failure;
    const gate = this.beforeDispatch(groups);
    const transactional = this.transactionalId !== null;

    const batches: PartitionBatch[] = [];
    const onePartition = groups.length === 1;
    for (const group of groups) {
      const tp = `${group.topic}\u0000${group.partition}`;
      // One partition (the common case): the records themselves are the batch's input.
      const inputs = onePartition ? records : group.indexes.map((i) => records[i]!);
      const baseSequence = this.sequences.get(tp) ?? 0;
      this.sequences.set(tp, nextSequence(baseSequence, inputs.length));
      let lease: BufferLease | undefined;
      const bytes = encodeBatch({
        records: inputs,
        defaultTimestamp: sentAt,
        codec: this.o.codec,
        ...(this.o.compressionLevel !== undefined
          ? { compressionLevel: this.o.compressionLevel }
          : {}),
        producerId: this.producerId,
        producerEpoch: this.producerEpoch,
        baseSequence,
        transactional,
        allocate: (size) => {
          lease = this.buffers.lend(size);
          return lease.buffer;
        },
      });
      batches.push({
        topic: group.topic,
        partition: group.partition,
        bytes,
        lease: lease!,
        indexes: group.indexes,
        answer: Promise.resolve({
          errorCode: 0,
          errorMessage: null,
          baseOffset: -1,
          logAppendTime: -1,
        }),
        baseOffset: -1,
        logAppendTime: -1,
      });
    }
    this.inFlight++;
    const wait = this.writeAfter(gate, batches);
    if (wait === undefined) {
      await this.dispatch(batches);
      return { records, sentAt, batches, written: undefined };
    }
    const written = wait.then(() => {
      // Nothing is written for a producer that failed meanwhile: its sequences are off.
      if (this.failure) throw this.failure;
      return this.dispatch(batches);
    });
    for (const b of batches) this.unwritten.set(`${b.topic}\u0000${b.partition}`, written);
    const forget = () => {
      for (const b of batches) {
        const tp = `${b.topic}\u0000${b.partition}`;
        if (this.unwritten.get(tp) === written) this.unwritten.delete(tp);
      }
    };
    written.then(forget, forget);
    return { records, sentAt, batches, written };
  }

  /**
   * What a send's requests wait for before they are written: its gate, and earlier
   * gated sends to its partitions not written yet. Undefined: nothing (the common case).
   */
  private writeAfter(
    gate: Promise<void> | undefined,
    batches: readonly PartitionBatch[],
  ): Promise<void> | undefined {
    if (this.unwritten.size === 0) return gate;
    const waits: Promise<void>[] = gate === undefined ? [] : [gate];
    for (const b of batches) {
      const earlier = this.unwritten.get(`${b.topic}\u0000${b.partition}`);
      if (earlier !== undefined) waits.push(earlier);
    }
    if (waits.length <= 1) return waits[0];
    return Promise.all(waits).then(() => undefined);
  }

  /** Writes the batches as one Produce request per leader; each batch gets its answer promise. */
  private async dispatch(batches: PartitionBatch[]): Promise<void> {
    const byLeader = new Map<BrokerConnection, PartitionBatch[]>();
    for (const b of batches) {
      try {
        const conn = await this.client.leaderConnection(b.topic, b.partition);
        let list = byLeader.get(conn);
        if (list === undefined) {
          list = [];
          byLeader.set(conn, list);
        }
        list.push(b);
      } catch (e) {
        b.answer = Promise.reject(e);
        b.answer.catch(() => undefined);
      }
    }
    for (const [conn, list] of byLeader) {
      const topics = new Map<string, Array<{ index: number; records: Buffer }>>();
      for (const b of list) {
        let partitions = topics.get(b.topic);
        if (partitions === undefined) {
          partitions = [];
          topics.set(b.topic, partitions);
        }
        partitions.push({ index: b.partition, records: b.bytes });
      }
      const response = conn.request(
        ApiKey.Produce,
        {
          transactionalId: this.transactionalId,
          acks: -1,
          timeoutMs: this.o.requestTimeoutMs,
          topicData: [...topics].map(([name, partitionData]) => ({ name, partitionData })),
        },
        { timeoutMs: this.o.requestTimeoutMs + 5_000 },
      );
      for (const b of list) {
        b.answer = response.then((answer) => partitionAnswer(answer, b.topic, b.partition));
        b.answer.catch(() => undefined);
      }
    }
  }

  private async complete(job: Job, previous: Promise<unknown>): Promise<RecordAck[]> {
    const deadline = job.sentAt + this.o.deliveryTimeoutMs;
    try {
      if (job.written !== undefined) await job.written;
      let pending = job.batches;
      let afterPrevious = false;
      for (;;) {
        const failed: PartitionBatch[] = [];
        let lastError: Error | undefined;
        for (const b of pending) {
          let answer: PartitionAnswer;
          try {
            answer = await b.answer;
          } catch (e) {
            // A dead connection or no reachable leader: whether the batch was appended
            // is unknown, and resending the same sequences makes that safe.
            if (notRetriable(e)) throw e;
            failed.push(b);
            lastError = e as Error;
            continue;
          }
          const code = answer.errorCode;
          if (code === 0 || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
            b.baseOffset = code === 0 ? answer.baseOffset : -1;
            b.logAppendTime = answer.logAppendTime;
            continue;
          }
          const error = new KafkaResponseError(
            code,
            `Produce to ${b.topic}-${b.partition}`,
            answer.errorMessage,
          );
          const outOfOrder = code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER;
          if (!(error.retriable || (outOfOrder && !afterPrevious))) throw error;
          failed.push(b);
          lastError = error;
        }
        if (failed.length === 0) break;
        if (Date.now() > deadline) {
          throw new Error(
            `records for ${failed.map((b) => `${b.topic}-${b.partition}`).join(', ')} were not acknowledged within delivery.timeout.ms (${this.o.deliveryTimeoutMs} ms): ${lastError?.message}`,
            { cause: lastError },
          );
        }
        // Earlier sends first: resending now keeps each partition's sequences in order.
        await previous;
        afterPrevious = true;
        if (this.failure) throw this.failure;
        this.o.onRetry?.(lastError!);
        await sleep(this.o.retryBackoffMs);
        this.client.invalidate();
        await this.dispatch(failed);
        pending = failed;
      }
      await previous;
      if (this.failure) throw this.failure;
      // Every batch is answered: the broker has read all of its bytes, and a batch is
      // only resent before its answer, so the buffers are free. (A failed send keeps
      // them: a write may still be queued, and the producer sends nothing more.)
      for (const b of job.batches) b.lease.release();
      return acksOf(job);
    } catch (e) {
      this.failure ??= e as Error;
      throw e;
    } finally {
      this.inFlight--;
      const wake = this.slotFreed;
      this.slotFreed = null;
      wake?.();
    }
  }

  /** The topic's partition count, from metadata (creating the topic where allowed). */
  private async partitionCount(topic: string, now: number): Promise<number> {
    const known = this.partitionCounts.get(topic);
    if (known !== undefined && now - known.at < this.o.metadataMaxAgeMs) return known.count;
    const deadline = Date.now() + this.o.deliveryTimeoutMs;
    for (;;) {
      let error: Error;
      try {
        const [meta] = await this.client.metadata([topic], this.o.allowAutoTopicCreation);
        if (meta !== undefined && meta.errorCode === 0 && meta.partitions.length > 0) {
          this.partitionCounts.set(topic, { count: meta.partitions.length, at: Date.now() });
          return meta.partitions.length;
        }
        const code = meta?.errorCode || ErrorCode.LEADER_NOT_AVAILABLE;
        error = new KafkaResponseError(code, `Metadata for topic ${topic}`);
        if (!(error as KafkaResponseError).retriable) throw error;
      } catch (e) {
        if (notRetriable(e)) throw e;
        error = e as Error;
      }
      if (Date.now() > deadline) throw error;
      await sleep(this.o.retryBackoffMs);
    }
  }
}

function partitionAnswer(answer: Message, topic: string, partition: number): PartitionAnswer {
  for (const t of answer.responses as Message[]) {
    if (t.name !== topic) continue;
    for (const p of t.partitionResponses as Message[]) {
      if (p.index !== partition) continue;
      return {
        errorCode: p.errorCode as number,
        errorMessage: (p.errorMessage as string | null | undefined) ?? null,
        baseOffset: Number(p.baseOffset),
        logAppendTime: Number(p.logAppendTimeMs ?? -1n),
      };
    }
  }
  throw new Error(`the Produce answer has no entry for ${topic}-${partition}`);
}

function acksOf(job: Job): RecordAck[] {
  const acks = new Array<RecordAck>(job.records.length);
  for (const b of job.batches) {
    for (let j = 0; j < b.indexes.length; j++) {
      const i = b.indexes[j]!;
      acks[i] = {
        topic: b.topic,
        partition: b.partition,
        offset: b.baseOffset < 0 ? -1 : b.baseOffset + j,
        timestamp:
          b.logAppendTime >= 0 ? b.logAppendTime : (job.records[i]!.timestamp ?? job.sentAt),
      };
    }
  }
  return acks;
}

/** The sequence after `count` records from `base`, wrapping past Int32.MAX to 0 as Kafka does. */
function nextSequence(base: number, count: number): number {
  return base > MAX_SEQUENCE - count ? count - (MAX_SEQUENCE - base) - 1 : base + count;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
