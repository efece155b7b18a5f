/**
 * The transaction coordinator (Kafka's TransactionCoordinator) of a single node: it
 * owns every transactional id, hands out producer ids and epochs for them, tracks
 * which partitions each transaction touches, and ends transactions by writing their
 * markers (marker-writer.ts).
 *
 * Rules, as Kafka applies them:
 * - InitProducerId bumps the epoch on every call (a new producer id once the epoch is
 *   exhausted), which fences the previous producer of the id. A transaction still open
 *   is aborted under a bumped epoch and the answer is CONCURRENT_TRANSACTIONS; the
 *   client's retry then gets the next epoch. A producer naming its id and epoch
 *   (KIP-360) must name the current ones, or the previous epoch when it retries an
 *   init whose answer was lost (it gets the current epoch again). The timeout must be
 *   in [1, transaction.max.timeout.ms].
 * - AddPartitionsToTxn / AddOffsetsToTxn need the current producer id and epoch and
 *   open the transaction (Ongoing) on the first partition.
 * - EndTxn moves Ongoing to PrepareCommit/PrepareAbort (written to the log first),
 *   writes the markers, then Complete*; a retried EndTxn of a completed transaction
 *   succeeds, the opposite decision is INVALID_TXN_STATE.
 * - A transaction open past its timeout is aborted by the coordinator with a bumped
 *   epoch, so the producer that went quiet is fenced.
 *
 * Every state change is written to the transaction log (TransactionStore) and only
 * applied in memory once durable. A transaction found in PrepareCommit/PrepareAbort at
 * load (a crash between the decision and the last marker) is completed then.
 *
 * Concurrency: requests for one transactional id run one after another (a promise
 * chain per id), since each may wait for log writes; ids are independent. Runs on the
 * broker thread.
 */
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { MarkerWriter } from './marker-writer.ts';
import type { TransactionStore } from './transaction-log-store.ts';
import {
  hasPartition,
  isComplete,
  MAX_EPOCH,
  type TopicPartition,
  type TransactionMetadata,
} from './transaction-metadata.ts';
import type { TxnError } from './txn-errors.ts';

export interface TransactionCoordinatorOptions {
  store: TransactionStore;
  markers: MarkerWriter;
  allocateProducerId: () => Promise<number>;
  clock: Clock;
  logger: Logger;
  /** transaction.max.timeout.ms */
  maxTimeoutMs: number;
  /** transactional.id.expiration.ms */
  idExpirationMs: number;
}

export interface ProducerIdAndEpoch {
  error: TxnError;
  producerId: number;
  producerEpoch: number;
}

const NO_PRODUCER = { producerId: -1, producerEpoch: -1 };

export class TransactionCoordinator {
  private readonly txns = new Map<string, TransactionMetadata>();
  private readonly chains = new Map<string, Promise<unknown>>();
  private closed = false;

  constructor(private readonly options: TransactionCoordinatorOptions) {}

  /** Takes the state read from the transaction log; completes what was being completed. */
  async load(loaded: Map<string, TransactionMetadata>): Promise<void> {
    for (const [id, meta] of loaded) this.txns.set(id, meta);
    const prepared = [...loaded.values()].filter(
      (m) => m.state === 'PrepareCommit' || m.state === 'PrepareAbort',
    );
    for (const meta of prepared) {
      await this.serialized(meta.transactionalId, () => this.complete(meta.transactionalId));
    }
    this.options.logger.info(
      { transactionalIds: loaded.size, completed: prepared.length },
      'loaded the transaction log',
    );
  }

  /**
   * Refuses new work (COORDINATOR_NOT_AVAILABLE) and resolves once every request or
   * sweep in progress has finished, so the logs it writes to can close after it.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.chains.values()]);
  }

  /** The current state of an id (DescribeTransactions, tests). */
  describe(transactionalId: string): Readonly<TransactionMetadata> | undefined {
    return this.txns.get(transactionalId);
  }

  all(): ReadonlyArray<Readonly<TransactionMetadata>> {
    return [...this.txns.values()];
  }

  initProducerId(
    transactionalId: string,
    timeoutMs: number,
    expected: { producerId: number; producerEpoch: number } | undefined,
  ): Promise<ProducerIdAndEpoch> {
    if (this.closed) return Promise.resolve({ error: 'COORDINATOR_NOT_AVAILABLE', ...NO_PRODUCER });
    if (transactionalId === '')
      return Promise.resolve({ error: 'INVALID_REQUEST', ...NO_PRODUCER });
    if (timeoutMs <= 0 || timeoutMs > this.options.maxTimeoutMs) {
      return Promise.resolve({ error: 'INVALID_TRANSACTION_TIMEOUT', ...NO_PRODUCER });
    }
    return this.serialized(transactionalId, async () => {
      const meta =
        this.txns.get(transactionalId) ?? (await this.created(transactionalId, timeoutMs));
      if (expected !== undefined && !namesThisProducer(meta, expected)) {
        return { error: 'PRODUCER_FENCED', ...NO_PRODUCER };
      }
      switch (meta.state) {
        case 'PrepareCommit':
        case 'PrepareAbort':
        case 'PrepareEpochFence':
          return { error: 'CONCURRENT_TRANSACTIONS', ...NO_PRODUCER };
        case 'Ongoing':
          return this.fenceOngoing(meta);
        case 'Dead':
          return { error: 'INVALID_TXN_STATE', ...NO_PRODUCER };
        default:
          return this.nextEpoch(meta, timeoutMs, expected);
      }
    });
  }

  /** AddPartitionsToTxn: one answer for all partitions (the handler adds per-partition refusals). */
  addPartitions(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    partitions: readonly TopicPartition[],
  ): Promise<TxnError> {
    return this.serialized(transactionalId, async () => {
      const meta = this.txns.get(transactionalId);
      const refused = this.checkProducer(meta, producerId, producerEpoch);
      if (refused !== 'NONE') return refused;
      if (meta!.state === 'PrepareCommit' || meta!.state === 'PrepareAbort')
        return 'CONCURRENT_TRANSACTIONS';
      if (meta!.state === 'PrepareEpochFence' || meta!.state === 'Dead') return 'INVALID_TXN_STATE';
      const added = partitions.filter((tp) => !hasPartition(meta!, tp));
      if (meta!.state === 'Ongoing' && added.length === 0) return 'NONE';
      const now = this.options.clock.now();
      const ongoing = meta!.state === 'Ongoing';
      await this.persist({
        ...meta!,
        state: 'Ongoing',
        partitions: ongoing ? [...meta!.partitions, ...added] : dedupe(partitions),
        txnStartTimestamp: ongoing ? meta!.txnStartTimestamp : now,
        lastUpdateTimestamp: now,
      });
      return 'NONE';
    });
  }

  /**
   * AddPartitionsToTxn v4 with VerifyOnly (KIP-890's check, as a partition leader
   * asks it): NONE for each partition in the producer's open transaction,
   * INVALID_TXN_STATE for the others; a refusal of the producer applies to all.
   */
  verifyPartitions(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    partitions: readonly TopicPartition[],
  ): Promise<TxnError[]> {
    return this.serialized(transactionalId, async () => {
      const meta = this.txns.get(transactionalId);
      let refused = this.checkProducer(meta, producerId, producerEpoch);
      if (
        refused === 'NONE' &&
        (meta!.state === 'PrepareCommit' || meta!.state === 'PrepareAbort')
      ) {
        refused = 'CONCURRENT_TRANSACTIONS';
      }
      if (refused !== 'NONE') return partitions.map(() => refused);
      return partitions.map((tp) =>
        meta!.state === 'Ongoing' && hasPartition(meta!, tp) ? 'NONE' : 'INVALID_TXN_STATE',
      );
    });
  }

  /** EndTxn from the producer. */
  endTxn(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    commit: boolean,
  ): Promise<TxnError> {
    return this.serialized(transactionalId, async () => {
      const meta = this.txns.get(transactionalId);
      const refused = this.checkProducer(meta, producerId, producerEpoch);
      if (refused !== 'NONE') return refused;
      switch (meta!.state) {
        case 'Ongoing':
          await this.persist({
            ...meta!,
            state: commit ? 'PrepareCommit' : 'PrepareAbort',
            lastUpdateTimestamp: this.options.clock.now(),
          });
          return this.complete(transactionalId);
        case 'CompleteCommit':
          return commit ? 'NONE' : 'INVALID_TXN_STATE';
        case 'CompleteAbort':
          return commit ? 'INVALID_TXN_STATE' : 'NONE';
        case 'PrepareCommit':
          return commit ? 'CONCURRENT_TRANSACTIONS' : 'INVALID_TXN_STATE';
        case 'PrepareAbort':
          return commit ? 'INVALID_TXN_STATE' : 'CONCURRENT_TRANSACTIONS';
        default:
          return 'INVALID_TXN_STATE';
      }
    });
  }

  /**
   * Whether a producer may write transactional data (or offsets) to a partition: its
   * id and epoch are current and the partition was added to its open transaction.
   */
  checkPartition(
    transactionalId: string | null,
    producerId: number,
    producerEpoch: number,
    tp: TopicPartition,
  ): TxnError {
    const meta =
      transactionalId === null ? this.byProducerId(producerId) : this.txns.get(transactionalId);
    const refused = this.checkProducer(meta, producerId, producerEpoch);
    if (refused !== 'NONE') return refused;
    return meta!.state === 'Ongoing' && hasPartition(meta!, tp) ? 'NONE' : 'INVALID_TXN_STATE';
  }

  /** Aborts, with a bumped epoch, every transaction open longer than its timeout. */
  async abortTimedOut(): Promise<number> {
    if (this.closed) return 0;
    const now = this.options.clock.now();
    const late = [...this.txns.values()].filter(
      (m) =>
        m.state === 'Ongoing' &&
        m.txnStartTimestamp >= 0 &&
        now - m.txnStartTimestamp > m.timeoutMs,
    );
    let aborted = 0;
    for (const m of late) {
      const result = await this.serialized(m.transactionalId, async () => {
        const current = this.txns.get(m.transactionalId);
        // It may have ended, or been fenced, while this waited its turn.
        if (current?.state !== 'Ongoing' || current.producerEpoch !== m.producerEpoch)
          return 'NONE';
        return this.abortFencing(current);
      });
      if (result === 'NONE') aborted++;
      this.options.logger.info(
        {
          transactionalId: m.transactionalId,
          producerId: m.producerId,
          timeoutMs: m.timeoutMs,
          result,
        },
        'aborted a transaction that ran past its timeout',
      );
    }
    // Prepared transactions whose markers failed earlier get another try.
    for (const m of [...this.txns.values()]) {
      if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') {
        await this.serialized(m.transactionalId, () => this.complete(m.transactionalId));
      }
    }
    return aborted;
  }

  /** Forgets ids with no open transaction and no activity for transactional.id.expiration.ms. */
  async expireIds(): Promise<number> {
    if (this.closed) return 0;
    const now = this.options.clock.now();
    let expired = 0;
    for (const m of [...this.txns.values()]) {
      if (!isComplete(m.state) || now - m.lastUpdateTimestamp < this.options.idExpirationMs)
        continue;
      await this.serialized(m.transactionalId, async () => {
        const current = this.txns.get(m.transactionalId);
        if (current !== m) return;
        await this.options.store.remove(m.transactionalId);
        this.txns.delete(m.transactionalId);
        expired++;
      });
    }
    return expired;
  }

  /** A new id's metadata, not yet written: its producer id, and no epoch until the first bump. */
  private async created(transactionalId: string, timeoutMs: number): Promise<TransactionMetadata> {
    const producerId = await this.options.allocateProducerId();
    return {
      transactionalId,
      producerId,
      producerEpoch: -1,
      timeoutMs,
      state: 'Empty',
      partitions: [],
      txnStartTimestamp: -1,
      lastUpdateTimestamp: this.options.clock.now(),
      lastProducerEpoch: -1,
      previousProducerId: -1,
    };
  }

  /**
   * InitProducerId with no transaction open (Kafka's prepareIncrementProducerEpoch and
   * prepareProducerIdRotation): the next epoch, or a new producer id at an exhausted
   * epoch. A producer naming an epoch (KIP-360) must name the current one, or the one
   * before it when it retries the request that made the current one (the answer was
   * lost): it then gets the current epoch back, unbumped. Any other epoch is fenced.
   */
  private async nextEpoch(
    meta: TransactionMetadata,
    timeoutMs: number,
    expected: { producerId: number; producerEpoch: number } | undefined,
  ): Promise<ProducerIdAndEpoch> {
    let next: TransactionMetadata;
    if (
      expected !== undefined &&
      meta.producerEpoch >= 0 &&
      expected.producerEpoch !== meta.producerEpoch
    ) {
      if (meta.lastProducerEpoch < 0 || expected.producerEpoch !== meta.lastProducerEpoch) {
        return { error: 'PRODUCER_FENCED', ...NO_PRODUCER };
      }
      next = meta;
    } else {
      next = {
        ...(await this.bumped(meta)),
        previousProducerId: meta.producerId,
        // Only a producer that named its epoch may retry with it; a new producer's
        // init leaves no earlier epoch that could still claim the id.
        lastProducerEpoch: expected === undefined ? -1 : meta.producerEpoch,
      };
    }
    const ready: TransactionMetadata = {
      ...next,
      timeoutMs,
      state: 'Empty',
      partitions: [],
      txnStartTimestamp: -1,
      lastUpdateTimestamp: this.options.clock.now(),
    };
    await this.persist(ready);
    return { error: 'NONE', producerId: ready.producerId, producerEpoch: ready.producerEpoch };
  }

  /**
   * InitProducerId while a transaction is open (Kafka's PrepareEpochFence): the epoch is
   * bumped, which fences the producer that opened it, and the transaction is aborted
   * with markers of the new epoch. That epoch is never handed out: the answer is
   * CONCURRENT_TRANSACTIONS, which every client retries, and the retry bumps again (to
   * a new producer id if this fence reached the exhausted epoch). It is the answer even
   * if a marker could not be written: the abort is decided and durable, the sweep
   * writes the markers, and until then the retry is told CONCURRENT_TRANSACTIONS.
   */
  private async fenceOngoing(meta: TransactionMetadata): Promise<ProducerIdAndEpoch> {
    await this.abortFencing(meta);
    return { error: 'CONCURRENT_TRANSACTIONS', ...NO_PRODUCER };
  }

  private checkProducer(
    meta: TransactionMetadata | undefined,
    producerId: number,
    producerEpoch: number,
  ): TxnError {
    if (this.closed) return 'COORDINATOR_NOT_AVAILABLE';
    if (meta === undefined || meta.producerId !== producerId) return 'INVALID_PRODUCER_ID_MAPPING';
    if (meta.producerEpoch !== producerEpoch) return 'PRODUCER_FENCED';
    return 'NONE';
  }

  private byProducerId(producerId: number): TransactionMetadata | undefined {
    for (const m of this.txns.values()) if (m.producerId === producerId) return m;
    return undefined;
  }

  /** The metadata with its epoch bumped, or a new producer id when the epoch is exhausted. */
  private async bumped(meta: TransactionMetadata): Promise<TransactionMetadata> {
    if (meta.producerEpoch >= MAX_EPOCH - 1) {
      return { ...meta, producerId: await this.options.allocateProducerId(), producerEpoch: 0 };
    }
    return { ...meta, producerEpoch: meta.producerEpoch + 1 };
  }

  /**
   * Fences the current epoch and aborts the open transaction under the next one. The
   * epoch is bumped in place (no new producer id: the markers must reach the
   * partitions' state of this producer id); at the exhausted epoch it stays.
   */
  private async abortFencing(meta: TransactionMetadata): Promise<TxnError> {
    const epoch = meta.producerEpoch < MAX_EPOCH ? meta.producerEpoch + 1 : meta.producerEpoch;
    await this.persist({
      ...meta,
      producerEpoch: epoch,
      // The fenced epoch may not come back as a KIP-360 retry.
      lastProducerEpoch: -1,
      state: 'PrepareAbort',
      lastUpdateTimestamp: this.options.clock.now(),
    });
    return this.complete(meta.transactionalId);
  }

  /** Writes the markers of a prepared transaction, then its completion. Run in the id's chain. */
  private async complete(transactionalId: string): Promise<TxnError> {
    const meta = this.txns.get(transactionalId)!;
    const commit = meta.state === 'PrepareCommit';
    try {
      await this.options.markers.write(
        meta.partitions,
        meta.producerId,
        meta.producerEpoch,
        commit,
      );
    } catch (err) {
      this.options.logger.error(
        { err, transactionalId },
        'could not write transaction markers; will retry',
      );
      return 'COORDINATOR_NOT_AVAILABLE';
    }
    await this.persist({
      ...meta,
      state: commit ? 'CompleteCommit' : 'CompleteAbort',
      partitions: [],
      txnStartTimestamp: -1,
      lastUpdateTimestamp: this.options.clock.now(),
    });
    return 'NONE';
  }

  /** Makes a state durable, then current. */
  private async persist(meta: TransactionMetadata): Promise<void> {
    await this.options.store.write(meta);
    this.txns.set(meta.transactionalId, meta);
  }

  private serialized<T>(transactionalId: string, work: () => Promise<T>): Promise<T> {
    const before = this.chains.get(transactionalId) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => undefined);
    this.chains.set(transactionalId, tail);
    void tail.then(() => {
      if (this.chains.get(transactionalId) === tail) this.chains.delete(transactionalId);
    });
    return run;
  }
}

/**
 * Whether the producer id a KIP-360 InitProducerId names is this id's (Kafka's
 * isValidProducerId): its current one, any when the id has no epoch yet (just created:
 * a producer recovering from UNKNOWN_PRODUCER_ID gets the new id), or the previous one
 * at an exhausted epoch, a retry of the request that rotated the producer id. The
 * epoch is checked afterwards.
 */
function namesThisProducer(
  meta: TransactionMetadata,
  expected: { producerId: number; producerEpoch: number },
): boolean {
  return (
    meta.producerEpoch < 0 ||
    expected.producerId === meta.producerId ||
    (expected.producerId === meta.previousProducerId && expected.producerEpoch >= MAX_EPOCH - 1)
  );
}

function dedupe(partitions: readonly TopicPartition[]): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const tp of partitions) {
    if (!out.some((p) => p.topic === tp.topic && p.partition === tp.partition)) out.push({ ...tp });
  }
  return out;
}
