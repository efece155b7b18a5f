/**
 * Idempotent-producer state of one partition: for each producer id, its epoch and
 * the last five batches it appended (first/last sequence and offsets), so a retried
 * batch is recognised and answered with its original offsets instead of appended
 * twice, and a gap in sequences is refused.
 *
 * Rules (Kafka's ProducerStateManager):
 *   - an epoch older than the known one is fenced (INVALID_PRODUCER_EPOCH);
 *   - a newer epoch must start at sequence 0;
 *   - within an epoch, a batch equal to one of the last five is a duplicate; otherwise
 *     its first sequence must follow the last one (wrapping at 2^31-1), else
 *     OUT_OF_ORDER_SEQUENCE_NUMBER;
 *   - a producer with no state must start at sequence 0.
 *
 * Transactions: a producer's first transactional batch after a marker opens its
 * transaction here (`currentTxnFirstOffset`); the COMMIT or ABORT marker the
 * coordinator writes (`onMarker`) closes it and may bump the epoch. The smallest
 * open first offset of the partition is its first unstable offset: the last stable
 * offset (LSO) is that, or the high watermark when nothing is open. A producer with
 * an open transaction is never expired.
 *
 * Snapshot format (a JSON file next to the segments, `<offset>.snapshot`, written
 * atomically): `{ "offset": <log end offset covered>, "producers": [...] }`, each
 * producer with its open transaction's first offset (-1 none). After a
 * crash the partition loads the newest snapshot and replays the batches after its
 * offset through `onAppend`, so deduplication survives restarts.
 *
 * Single-threaded: the partition's append path calls `check` and then `onAppend` for
 * the same batch with no other append in between.
 */

export const NO_PRODUCER_ID = -1;
/** How many recent batches per producer are remembered for duplicate detection (Kafka's 5 in-flight). */
export const BATCHES_REMEMBERED = 5;

export interface BatchIdentity {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  /** Number of records in the batch minus one. */
  lastOffsetDelta: number;
}

interface RememberedBatch {
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
  timestamp: number;
}

interface ProducerEntry {
  producerId: number;
  epoch: number;
  batches: RememberedBatch[];
  lastTimestamp: number;
  /** First offset of the open transaction, -1 when none (absent in older snapshots). */
  currentTxnFirstOffset: number;
}

/** What a transaction marker closed: the transaction's first offset, -1 if none was open. */
export interface CompletedTxn {
  producerId: number;
  firstOffset: number;
  lastOffset: number;
}

export type SequenceCheck =
  | { kind: 'append' }
  | { kind: 'duplicate'; firstOffset: number; lastOffset: number }
  | {
      kind: 'error';
      error: 'INVALID_PRODUCER_EPOCH' | 'OUT_OF_ORDER_SEQUENCE_NUMBER';
      message: string;
    };

const MAX_SEQUENCE = 0x7fffffff;

function lastSequence(baseSequence: number, lastOffsetDelta: number): number {
  const last = baseSequence + lastOffsetDelta;
  return last > MAX_SEQUENCE ? last - MAX_SEQUENCE - 1 : last;
}

function nextSequence(seq: number): number {
  return seq === MAX_SEQUENCE ? 0 : seq + 1;
}

export interface ProducerStateSnapshot {
  offset: number;
  producers: ProducerEntry[];
}

export class ProducerState {
  private readonly producers = new Map<number, ProducerEntry>();
  /** producer id -> first offset, for the open transactions only: the LSO is read on every Fetch. */
  private readonly openTxns = new Map<number, number>();

  /** Decides what to do with a batch before it is appended. */
  check(batch: BatchIdentity): SequenceCheck {
    if (batch.producerId === NO_PRODUCER_ID) return { kind: 'append' };
    const entry = this.producers.get(batch.producerId);
    const firstSeq = batch.baseSequence;
    const lastSeq = lastSequence(firstSeq, batch.lastOffsetDelta);
    if (!entry) {
      if (firstSeq !== 0) {
        return outOfOrder(
          `producer ${batch.producerId} is unknown here and its first batch starts at sequence ${firstSeq}, not 0`,
        );
      }
      return { kind: 'append' };
    }
    if (batch.producerEpoch < entry.epoch) {
      return {
        kind: 'error',
        error: 'INVALID_PRODUCER_EPOCH',
        message: `producer ${batch.producerId} epoch ${batch.producerEpoch} is older than the current epoch ${entry.epoch}`,
      };
    }
    if (batch.producerEpoch > entry.epoch) {
      if (firstSeq !== 0) {
        return outOfOrder(
          `new epoch ${batch.producerEpoch} of producer ${batch.producerId} must start at sequence 0, not ${firstSeq}`,
        );
      }
      return { kind: 'append' };
    }
    const duplicate = entry.batches.find((b) => b.firstSeq === firstSeq && b.lastSeq === lastSeq);
    if (duplicate)
      return {
        kind: 'duplicate',
        firstOffset: duplicate.firstOffset,
        lastOffset: duplicate.lastOffset,
      };
    const last = entry.batches.at(-1);
    const expected = last ? nextSequence(last.lastSeq) : 0;
    if (firstSeq !== expected) {
      return outOfOrder(
        `producer ${batch.producerId} sent sequence ${firstSeq}, expected ${expected}`,
      );
    }
    return { kind: 'append' };
  }

  /**
   * Records an appended batch (also used to replay the log after a snapshot); a
   * transactional one opens the producer's transaction if none is open.
   */
  onAppend(
    batch: BatchIdentity,
    firstOffset: number,
    timestamp: number,
    transactional = false,
  ): void {
    if (batch.producerId === NO_PRODUCER_ID) return;
    let entry = this.producers.get(batch.producerId);
    if (!entry || batch.producerEpoch > entry.epoch) {
      entry = {
        producerId: batch.producerId,
        epoch: batch.producerEpoch,
        batches: [],
        lastTimestamp: timestamp,
        // A new epoch does not close a transaction: only a marker does.
        currentTxnFirstOffset: entry?.currentTxnFirstOffset ?? -1,
      };
      this.producers.set(batch.producerId, entry);
    }
    if (transactional && entry.currentTxnFirstOffset < 0) {
      entry.currentTxnFirstOffset = firstOffset;
      this.openTxns.set(batch.producerId, firstOffset);
    }
    entry.batches.push({
      firstSeq: batch.baseSequence,
      lastSeq: lastSequence(batch.baseSequence, batch.lastOffsetDelta),
      firstOffset,
      lastOffset: firstOffset + batch.lastOffsetDelta,
      timestamp,
    });
    if (entry.batches.length > BATCHES_REMEMBERED) entry.batches.shift();
    entry.lastTimestamp = timestamp;
  }

  /**
   * Whether a marker of this epoch may be written: the coordinator bumps epochs, so
   * a marker never carries an older epoch than the partition has seen.
   */
  checkMarker(producerId: number, producerEpoch: number): string | undefined {
    const entry = this.producers.get(producerId);
    if (entry && producerEpoch < entry.epoch) {
      return `marker epoch ${producerEpoch} of producer ${producerId} is older than ${entry.epoch}`;
    }
    return undefined;
  }

  /**
   * A COMMIT or ABORT marker at `offset` was appended (or replayed): closes the
   * producer's open transaction. A marker of a newer epoch (an abort written while
   * fencing) makes that epoch current and forgets the old epoch's sequences.
   */
  onMarker(
    producerId: number,
    producerEpoch: number,
    offset: number,
    timestamp: number,
  ): CompletedTxn {
    let entry = this.producers.get(producerId);
    if (!entry) {
      entry = {
        producerId,
        epoch: producerEpoch,
        batches: [],
        lastTimestamp: timestamp,
        currentTxnFirstOffset: -1,
      };
      this.producers.set(producerId, entry);
    } else if (producerEpoch > entry.epoch) {
      entry.epoch = producerEpoch;
      entry.batches = [];
    }
    const firstOffset = entry.currentTxnFirstOffset;
    entry.currentTxnFirstOffset = -1;
    this.openTxns.delete(producerId);
    entry.lastTimestamp = timestamp;
    return { producerId, firstOffset, lastOffset: offset };
  }

  /** The smallest first offset of an open transaction, undefined when none is open. */
  firstUnstableOffset(): number | undefined {
    let first: number | undefined;
    for (const f of this.openTxns.values()) if (first === undefined || f < first) first = f;
    return first;
  }

  /** Every producer with state here (DescribeProducers). */
  activeProducers(): Array<{
    producerId: number;
    epoch: number;
    lastSequence: number;
    lastTimestamp: number;
    currentTxnFirstOffset: number;
  }> {
    return [...this.producers.values()].map((e) => ({
      producerId: e.producerId,
      epoch: e.epoch,
      lastSequence: e.batches.at(-1)?.lastSeq ?? -1,
      lastTimestamp: e.lastTimestamp,
      currentTxnFirstOffset: e.currentTxnFirstOffset,
    }));
  }

  /**
   * Forgets producers idle longer than `expirationMs` (Kafka's producer.id.expiration.ms),
   * except those with an open transaction: their marker is still to come.
   */
  expire(now: number, expirationMs: number): void {
    for (const [id, entry] of this.producers) {
      if (entry.currentTxnFirstOffset < 0 && now - entry.lastTimestamp > expirationMs) {
        this.producers.delete(id);
      }
    }
  }

  /** Producer ids with remembered state, for tests and metrics. */
  get size(): number {
    return this.producers.size;
  }

  snapshot(offset: number): ProducerStateSnapshot {
    return {
      offset,
      producers: [...this.producers.values()].map((p) => ({
        ...p,
        batches: p.batches.map((b) => ({ ...b })),
      })),
    };
  }

  static fromSnapshot(snapshot: ProducerStateSnapshot): ProducerState {
    const state = new ProducerState();
    for (const p of snapshot.producers) {
      state.producers.set(p.producerId, {
        ...p,
        batches: p.batches.map((b) => ({ ...b })),
        currentTxnFirstOffset: p.currentTxnFirstOffset ?? -1,
      });
      if ((p.currentTxnFirstOffset ?? -1) >= 0)
        state.openTxns.set(p.producerId, p.currentTxnFirstOffset);
    }
    return state;
  }
}

function outOfOrder(message: string): SequenceCheck {
  return { kind: 'error', error: 'OUT_OF_ORDER_SEQUENCE_NUMBER', message };
}
