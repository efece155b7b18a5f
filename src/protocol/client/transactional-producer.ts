/**
 * A transactional producer on the protocol client (KIP-98), for the runtime's
 * exactly-once sources (KIP-618) and consume-transform-produce loops: the idempotent
 * producer's batching, sequences and retries (producer.ts), with its records and
 * consumer offsets written in transactions that commit or abort as one.
 *
 * Protocol, per transaction:
 *   init()                      FindCoordinator(key_type=1) -> InitProducerId(transactional
 *                               id): the id's epoch is bumped, older producers with the
 *                               same id are fenced, and a transaction they left open is
 *                               aborted by the coordinator.
 *   beginTransaction()          local only.
 *   send(records)               AddPartitionsToTxn for partitions new to the transaction
 *                               (before their data is written), then Produce with the
 *                               transactional id and batches marked transactional.
 *                               As in the Java producer, one AddPartitionsToTxn carries
 *                               every new partition of the sends made meanwhile, one is
 *                               in flight at a time, and sends to partitions already in
 *                               the transaction are written without waiting for it.
 *   sendOffsetsToTransaction()  AddOffsetsToTxn (coordinator) -> TxnOffsetCommit (the
 *                               group's coordinator): offsets held until the commit.
 *   commitTransaction()         waits for every send, then EndTxn(commit); the broker's
 *                               coordinator answers after the markers are written.
 *   abortTransaction()          EndTxn(abort) — or, after a failed send, InitProducerId
 *                               again: it aborts the transaction and bumps the epoch, so
 *                               sequences start over, which a failed send needs.
 *
 * States: uninitialized -> ready <-> in-transaction; in-transaction -> abortable on a
 * failed send or request (only abortTransaction() is accepted then); any -> fenced on
 * PRODUCER_FENCED / INVALID_PRODUCER_EPOCH (and the id being refused): fatal, see
 * transaction-errors.ts. A transaction the broker aborts for running past
 * `transactionTimeoutMs` bumps the epoch too, so it surfaces as fenced.
 *
 * Concurrency: one caller drives a transaction. Sends may overlap each other (they
 * settle in call order), but begin/commit/abort/sendOffsets are awaited in turn.
 *
 * Request versions: AddPartitionsToTxn is capped at v3, because v4+ is the batched
 * form Kafka reserves for brokers (KIP-890); the others use what both sides know.
 */
import { ApiKey } from '../api-keys.ts';
import type { Message } from '../codec.ts';
import { ErrorCode } from '../error-codes.ts';
import type { BrokerConnection } from './broker-connection.ts';
import { type ClusterClient, KafkaResponseError, notRetriable } from './cluster-client.ts';
import {
  IdempotentProducer,
  type ProducerOptions,
  type ProducerRecord,
  type RecordAck,
} from './producer.ts';
import {
  codeOf,
  isFencing,
  ProducerFencedError,
  TransactionAbortableError,
} from './transaction-errors.ts';

export interface TransactionalProducerOptions extends ProducerOptions {
  /** transactional.id: one per logical producer; a new instance with it fences the old. */
  transactionalId: string;
  /** transaction.timeout.ms: the broker aborts a transaction open longer than this. */
  transactionTimeoutMs?: number;
  /**
   * How long a coordinator request (InitProducerId, AddPartitions, EndTxn, ...) keeps
   * retrying retriable answers (the Java producer's max.block.ms).
   */
  maxBlockMs?: number;
}

/** The consumer group whose offsets a transaction commits (the Java client's ConsumerGroupMetadata). */
export interface ConsumerGroupMetadata {
  groupId: string;
  /** The member's generation; -1 (the default) skips the coordinator's zombie check (KIP-447). */
  generationId?: number;
  memberId?: string;
  groupInstanceId?: string | null;
}

export interface TransactionOffset {
  topic: string;
  partition: number;
  /** The next offset to consume, as with OffsetCommit. */
  offset: number;
  metadata?: string | null;
}

/** One AddPartitionsToTxn: the partitions it carries and the promise their sends wait on. */
interface PendingAdd {
  readonly topics: Map<string, number[]>;
  readonly keys: string[];
  done: Promise<void>;
}

type State = 'uninitialized' | 'ready' | 'in-transaction' | 'abortable' | 'fenced' | 'closed';

/** AddPartitionsToTxn v4+ is broker-to-broker only. */
const ADD_PARTITIONS_MAX_CLIENT_VERSION = 3;
/** Retried answers that mean "ask the coordinator again": it moved or is not known yet. */
const COORDINATOR_MOVED: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
]);
/**
 * Pause before retrying CONCURRENT_TRANSACTIONS: the previous transaction's markers
 * are being written and finish in milliseconds, so the ordinary retry.backoff.ms
 * would add most of a commit interval (the Java producer uses 20 ms for this too).
 */
const CONCURRENT_TRANSACTIONS_BACKOFF_MS = 20;

export class TransactionalProducer extends IdempotentProducer {
  private state: State = 'uninitialized';
  private fencedBy: ProducerFencedError | undefined;
  private abortableCause: Error | undefined;
  private readonly partitionsInTxn = new Set<string>();
  /** Partitions whose AddPartitionsToTxn is not answered yet, with that add's promise. */
  private readonly partitionsBeingAdded = new Map<string, Promise<void>>();
  /** The AddPartitionsToTxn gathering partitions until it goes out; undefined: none. */
  private nextAdd: PendingAdd | undefined;
  /** The last AddPartitionsToTxn of the transaction: the next goes out once it is answered. */
  private lastAdd: Promise<void> = Promise.resolve();
  private readonly groupsInTxn = new Set<string>();
  private coordinator: Promise<BrokerConnection> | undefined;
  private readonly t: Required<
    Pick<TransactionalProducerOptions, 'transactionalId' | 'transactionTimeoutMs' | 'maxBlockMs'>
  > & { retryBackoffMs: number };

  constructor(
    private readonly cluster: ClusterClient,
    options: TransactionalProducerOptions,
  ) {
    super(cluster, options);
    if (options.transactionalId === '') throw new Error('transactional.id must not be empty');
    this.t = {
      transactionalId: options.transactionalId,
      transactionTimeoutMs: options.transactionTimeoutMs ?? 60_000,
      maxBlockMs: options.maxBlockMs ?? 60_000,
      retryBackoffMs: options.retryBackoffMs ?? 100,
    };
  }

  protected override get transactionalId(): string {
    return this.t.transactionalId;
  }

  /** Registers with the transaction coordinator, fencing older producers of the same id. */
  override async init(): Promise<void> {
    this.refuseIf('fenced', 'closed');
    await super.init();
    this.clearTransaction();
    this.abortableCause = undefined;
    this.state = 'ready';
  }

  beginTransaction(): void {
    this.refuseIf('fenced', 'closed', 'abortable');
    if (this.state === 'uninitialized') throw new Error('call init() before beginTransaction()');
    if (this.state === 'in-transaction') throw new Error('a transaction is already open');
    this.state = 'in-transaction';
  }

  override send(records: readonly ProducerRecord[]): Promise<RecordAck[]> {
    try {
      this.requireTransaction('send');
    } catch (e) {
      return Promise.reject(e);
    }
    return super.send(records).catch((e: unknown) => {
      throw this.failed(e as Error);
    });
  }

  /** Commits consumer offsets as part of the transaction: they count only if it commits. */
  async sendOffsetsToTransaction(
    offsets: readonly TransactionOffset[],
    group: ConsumerGroupMetadata,
  ): Promise<void> {
    this.requireTransaction('sendOffsetsToTransaction');
    try {
      if (!this.groupsInTxn.has(group.groupId)) {
        const { producerId, producerEpoch } = this.identity;
        await this.coordinatorRequest(
          ApiKey.AddOffsetsToTxn,
          {
            transactionalId: this.t.transactionalId,
            producerId: BigInt(producerId),
            producerEpoch,
            groupId: group.groupId,
          },
          `AddOffsetsToTxn(${group.groupId})`,
          (a) => a.errorCode as number,
        );
        this.groupsInTxn.add(group.groupId);
      }
      await this.txnOffsetCommit(offsets, group);
    } catch (e) {
      throw this.failed(e as Error);
    }
  }

  /** Waits for every send of the transaction, then commits it. */
  async commitTransaction(): Promise<void> {
    this.requireTransaction('commitTransaction');
    await this.flush();
    const failure = this.sendFailure ?? (await this.addsAnswered());
    if (failure) throw this.failed(failure);
    if (this.partitionsInTxn.size > 0 || this.groupsInTxn.size > 0) {
      try {
        await this.endTxn(true);
      } catch (e) {
        throw this.failed(e as Error);
      }
    }
    this.endedTransaction();
  }

  /**
   * Aborts the open transaction: nothing it wrote is seen by read_committed readers.
   * After a failure, the producer re-registers (new epoch, fresh sequences).
   */
  async abortTransaction(): Promise<void> {
    this.refuseIf('fenced', 'closed');
    if (this.state !== 'in-transaction' && this.state !== 'abortable') {
      throw new Error('no transaction is open to abort');
    }
    await this.flush();
    await this.addsAnswered();
    if (this.state === 'abortable' || this.sendFailure !== undefined) {
      try {
        await this.init();
      } catch (e) {
        throw this.failed(e as Error);
      }
      return;
    }
    if (this.partitionsInTxn.size > 0 || this.groupsInTxn.size > 0) {
      try {
        await this.endTxn(false);
      } catch (e) {
        throw this.failed(e as Error);
      }
    }
    this.endedTransaction();
  }

  override close(): void {
    this.state = 'closed';
    super.close();
  }

  /**
   * The AddPartitionsToTxn a send must wait for, for its partitions new to the
   * transaction; undefined when all of them are in it already.
   */
  protected override beforeDispatch(
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<void> | undefined {
    this.requireTransaction('send');
    let wait: Promise<void> | undefined;
    for (const { topic, partition } of partitions) {
      const key = `${topic}\u0000${partition}`;
      if (this.partitionsInTxn.has(key)) continue;
      let adding = this.partitionsBeingAdded.get(key);
      if (adding === undefined) {
        const add = this.nextAdd ?? this.gatherAdd();
        add.keys.push(key);
        const list = add.topics.get(topic);
        if (list === undefined) add.topics.set(topic, [partition]);
        else list.push(partition);
        adding = add.done;
        this.partitionsBeingAdded.set(key, adding);
      }
      // Adds are answered in order, so the one gathering covers the one in flight.
      if (wait === undefined || adding === this.nextAdd?.done) wait = adding;
    }
    return wait;
  }

  /**
   * Opens the next AddPartitionsToTxn. It gathers partitions until this turn of the
   * event loop is over (so the sends of one moment share it) and the previous add is
   * answered, then goes out; a failed previous add fails it unsent.
   */
  private gatherAdd(): PendingAdd {
    const previous = this.lastAdd;
    const add: PendingAdd = { topics: new Map(), keys: [], done: Promise.resolve() };
    const run = async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        await previous;
      } finally {
        if (this.nextAdd === add) this.nextAdd = undefined;
      }
      this.requireTransaction('send');
      const { producerId, producerEpoch } = this.identity;
      await this.coordinatorRequest(
        ApiKey.AddPartitionsToTxn,
        {
          transactionalId: this.t.transactionalId,
          producerId: BigInt(producerId),
          producerEpoch,
          topics: [...add.topics].map(([name, ps]) => ({ name, partitions: ps })),
        },
        'AddPartitionsToTxn',
        firstPartitionError,
        ADD_PARTITIONS_MAX_CLIENT_VERSION,
      );
      for (const key of add.keys) this.partitionsInTxn.add(key);
    };
    add.done = run().finally(() => {
      for (const key of add.keys) this.partitionsBeingAdded.delete(key);
    });
    // Its sends see a failure; this keeps one no send waits for from going unhandled.
    add.done.catch(() => undefined);
    this.nextAdd = add;
    this.lastAdd = add.done;
    return add;
  }

  /**
   * Resolves once every AddPartitionsToTxn of the transaction is answered, with the
   * failure of the last one, if any (sends have seen it already; this is for an add
   * whose send failed before it could wait for it).
   */
  private addsAnswered(): Promise<Error | undefined> {
    return this.lastAdd.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
  }

  protected override async initProducerId(): Promise<{
    producerId: number;
    producerEpoch: number;
  }> {
    const answer = await this.coordinatorRequest(
      ApiKey.InitProducerId,
      {
        transactionalId: this.t.transactionalId,
        transactionTimeoutMs: this.t.transactionTimeoutMs,
        producerId: -1n,
        producerEpoch: -1,
      },
      'InitProducerId',
      (a) => a.errorCode as number,
    );
    return { producerId: Number(answer.producerId), producerEpoch: answer.producerEpoch as number };
  }

  private async endTxn(commit: boolean): Promise<void> {
    const { producerId, producerEpoch } = this.identity;
    await this.coordinatorRequest(
      ApiKey.EndTxn,
      {
        transactionalId: this.t.transactionalId,
        producerId: BigInt(producerId),
        producerEpoch,
        committed: commit,
      },
      commit ? 'EndTxn(commit)' : 'EndTxn(abort)',
      (a) => a.errorCode as number,
    );
  }

  private async txnOffsetCommit(
    offsets: readonly TransactionOffset[],
    group: ConsumerGroupMetadata,
  ): Promise<void> {
    const byTopic = new Map<string, TransactionOffset[]>();
    for (const o of offsets) {
      const list = byTopic.get(o.topic) ?? [];
      list.push(o);
      byTopic.set(o.topic, list);
    }
    const { producerId, producerEpoch } = this.identity;
    const body = {
      transactionalId: this.t.transactionalId,
      groupId: group.groupId,
      producerId: BigInt(producerId),
      producerEpoch,
      generationId: group.generationId ?? -1,
      memberId: group.memberId ?? '',
      groupInstanceId: group.groupInstanceId ?? null,
      topics: [...byTopic].map(([name, list]) => ({
        name,
        partitions: list.map((o) => ({
          partitionIndex: o.partition,
          committedOffset: BigInt(o.offset),
          committedLeaderEpoch: -1,
          committedMetadata: o.metadata ?? null,
        })),
      })),
    };
    await this.retrying(`TxnOffsetCommit(${group.groupId})`, async () => {
      const conn = await this.cluster.coordinatorFor(group.groupId);
      const answer = await conn.request(ApiKey.TxnOffsetCommit, body);
      for (const t of answer.topics as Message[]) {
        for (const p of t.partitions as Message[]) {
          if (p.errorCode !== 0) {
            return { code: p.errorCode as number, context: `${t.name}-${p.partitionIndex}` };
          }
        }
      }
      return { code: 0, answer };
    });
  }

  /** A request to this id's transaction coordinator, retried while the answer is retriable. */
  private coordinatorRequest(
    apiKey: number,
    body: Message,
    what: string,
    errorOf: (answer: Message) => number,
    maxVersion?: number,
  ): Promise<Message> {
    return this.retrying(what, async () => {
      const conn = await this.coordinatorConnection();
      const negotiated = conn.versionFor(apiKey);
      const version =
        maxVersion !== undefined && negotiated !== undefined
          ? Math.min(negotiated, maxVersion)
          : negotiated;
      let answer: Message;
      try {
        answer = await conn.request(apiKey, body, { version });
      } catch (e) {
        this.coordinator = undefined;
        throw e;
      }
      const code = errorOf(answer);
      if (COORDINATOR_MOVED.has(code)) this.coordinator = undefined;
      return { code, answer };
    });
  }

  /**
   * Runs `attempt` until it answers 0, a non-retriable code (thrown: fencing as
   * ProducerFencedError) or maxBlockMs passes. Connection failures are retried.
   */
  private async retrying(
    what: string,
    attempt: () => Promise<{ code: number; answer?: Message; context?: string }>,
  ): Promise<Message> {
    const deadline = Date.now() + this.t.maxBlockMs;
    for (;;) {
      let error: Error;
      let backoff = this.t.retryBackoffMs;
      try {
        const { code, answer, context } = await attempt();
        if (code === 0) return answer!;
        error = new KafkaResponseError(code, context ? `${what} for ${context}` : what);
        if (isFencing(code)) throw this.fence(error, code);
        if (!(error as KafkaResponseError).retriable) throw error;
        if (code === ErrorCode.CONCURRENT_TRANSACTIONS)
          backoff = CONCURRENT_TRANSACTIONS_BACKOFF_MS;
      } catch (e) {
        if (e instanceof ProducerFencedError) throw e;
        if (notRetriable(e)) throw e;
        error = e as Error;
        this.cluster.invalidate();
      }
      if (Date.now() > deadline) {
        throw new Error(`${what} did not succeed within max.block.ms (${this.t.maxBlockMs} ms)`, {
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, backoff));
    }
  }

  private coordinatorConnection(): Promise<BrokerConnection> {
    const current = this.coordinator;
    if (current) {
      return current.then((c) => {
        if (!c.closed) return c;
        if (this.coordinator === current) this.coordinator = undefined;
        return this.coordinatorConnection();
      });
    }
    const found = this.cluster.coordinatorFor(this.t.transactionalId, 1);
    this.coordinator = found;
    found.catch(() => {
      if (this.coordinator === found) this.coordinator = undefined;
    });
    return found;
  }

  /** The error a failure in a transaction becomes, and the state it leaves. */
  private failed(e: Error): Error {
    if (e instanceof ProducerFencedError) return e;
    if (this.fencedBy) return this.fencedBy;
    const code = codeOf(e);
    if (isFencing(code)) return this.fence(e, code!);
    if (e instanceof TransactionAbortableError) return e;
    if (this.state === 'in-transaction' || this.state === 'abortable') {
      this.state = 'abortable';
      this.abortableCause ??= e;
    }
    return new TransactionAbortableError(this.t.transactionalId, e);
  }

  private fence(cause: Error, code: number): ProducerFencedError {
    this.fencedBy ??= new ProducerFencedError(this.t.transactionalId, code, cause);
    this.state = 'fenced';
    return this.fencedBy;
  }

  private endedTransaction(): void {
    this.clearTransaction();
    this.state = 'ready';
  }

  /** Forgets the transaction's partitions and groups; every send and add of it has settled. */
  private clearTransaction(): void {
    this.partitionsInTxn.clear();
    this.partitionsBeingAdded.clear();
    this.nextAdd = undefined;
    this.lastAdd = Promise.resolve();
    this.groupsInTxn.clear();
  }

  private requireTransaction(operation: string): void {
    this.refuseIf('fenced', 'closed', 'abortable');
    if (this.state !== 'in-transaction') {
      throw new Error(`${operation} needs an open transaction: call beginTransaction() first`);
    }
  }

  private refuseIf(...states: State[]): void {
    if (!states.includes(this.state)) return;
    if (this.state === 'fenced') throw this.fencedBy!;
    if (this.state === 'closed') throw new Error('producer is closed');
    throw new TransactionAbortableError(
      this.t.transactionalId,
      this.abortableCause ?? new Error('an earlier operation failed'),
    );
  }
}

/** The first partition's refusal of AddPartitionsToTxn v0-3, skipping OPERATION_NOT_ATTEMPTED. */
function firstPartitionError(answer: Message): number {
  let notAttempted = 0;
  for (const t of answer.results as Message[]) {
    for (const r of t.results as Message[]) {
      const code = r.errorCode as number;
      if (code === 0) continue;
      if (code === ErrorCode.OPERATION_NOT_ATTEMPTED) notAttempted = code;
      else return code;
    }
  }
  return notAttempted;
}
