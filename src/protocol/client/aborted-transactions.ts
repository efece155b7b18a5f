/**
 * Which batches of one partition's Fetch answer a reader hands over, the way Kafka's
 * consumers decide it (the Java client's CompletedFetch, librdkafka's msgset reader):
 *
 *   - control batches (transaction markers) are never records for the application;
 *   - with read_committed (isolation_level=1), a transactional data batch is dropped
 *     when its producer has an aborted transaction that started at or before the
 *     batch's last offset and whose ABORT marker has not been passed yet.
 *
 * The broker's answer carries `aborted_transactions`: (producer id, first offset) of
 * every aborted transaction overlapping the fetched range, and under read_committed it
 * never returns data past the last stable offset, so open transactions are not seen.
 * Batches must be offered in offset order, once each, from one answer.
 *
 * Under read_uncommitted the list is empty and only control batches are skipped.
 *
 * Cost: most answers carry no aborted transaction (none in the fetched range), and
 * then a batch costs one attribute read, as under read_uncommitted: nothing is
 * allocated per answer (`forAnswer` hands out one shared filter, which keeps no
 * state then), and markers are not decoded, as no aborted transaction can end.
 */
import type { Message } from '../codec.ts';
import { ControlType } from '../control-record.ts';
import {
  ATTR_CONTROL,
  ATTR_TRANSACTIONAL,
  ATTRIBUTES,
  type Record as BatchRecord,
  batchLastOffset,
  CorruptRecordError,
  checkBatch,
  controlRecordType,
  decodeRecords,
  PRODUCER_ID,
  readInt64,
} from '../record-batch.ts';

/**
 * The records of one partition's fetched bytes at or after `from` that `filter` keeps,
 * and the position after the last whole batch read (`from` when none was). Every batch
 * goes through the filter, also those before the position: an ABORT marker there still
 * ends its transaction. A last batch the broker cut at the byte limit is left for the
 * next fetch; any other damage throws. `records` is undefined when none was kept.
 */
export function recordsFrom(
  buf: Buffer,
  from: number,
  filter: AbortedTransactionFilter,
): { records: BatchRecord[] | undefined; next: number } {
  let next = from;
  let records: BatchRecord[] | undefined;
  for (let pos = 0; pos < buf.length; ) {
    const size = checkBatch(buf, pos, buf.length, true);
    if (size instanceof CorruptRecordError) {
      if (size.reason === 'truncated') break;
      throw size;
    }
    const last = batchLastOffset(buf, pos);
    const keep = filter.keeps(buf, pos);
    if (last >= next) {
      if (keep) {
        for (const r of decodeRecords(buf, pos)) {
          if (r.offset < next) continue;
          records ??= [];
          records.push(r);
        }
      }
      next = last + 1;
    }
    pos += size;
  }
  return { records, next };
}

export class AbortedTransactionFilter {
  private static readonly keepAllCommitted = new AbortedTransactionFilter(true, null);
  private static readonly keepAllUncommitted = new AbortedTransactionFilter(false, null);

  /**
   * The filter for one partition's answer: shared and stateless when the answer has
   * no aborted transaction to drop (the common case), else a new one.
   */
  static forAnswer(
    readCommitted: boolean,
    abortedTransactions: readonly Message[] | null | undefined,
  ): AbortedTransactionFilter {
    if (readCommitted && abortedTransactions && abortedTransactions.length > 0) {
      return new AbortedTransactionFilter(true, abortedTransactions);
    }
    return readCommitted
      ? AbortedTransactionFilter.keepAllCommitted
      : AbortedTransactionFilter.keepAllUncommitted;
  }

  /** Aborted transactions not reached yet, by first offset descending (pop() is the next). */
  private readonly upcoming: Array<{ producerId: number; firstOffset: number }>;
  /** Producers inside an aborted transaction at the current batch. */
  private readonly abortedProducers = new Set<number>();

  /**
   * @param readCommitted isolation_level=1 was asked for.
   * @param abortedTransactions the partition's `abortedTransactions` of the Fetch answer.
   */
  constructor(
    private readonly readCommitted: boolean,
    abortedTransactions: readonly Message[] | null | undefined,
  ) {
    this.upcoming =
      readCommitted && abortedTransactions
        ? abortedTransactions
            .map((a) => ({ producerId: Number(a.producerId), firstOffset: Number(a.firstOffset) }))
            .sort((a, b) => b.firstOffset - a.firstOffset)
        : [];
  }

  /** Whether the (checked, whole) batch at `pos` of `buf` is kept for the application. */
  keeps(buf: Buffer, pos: number): boolean {
    const attributes = buf.readInt16BE(pos + ATTRIBUTES);
    const control = (attributes & ATTR_CONTROL) !== 0;
    if (!this.readCommitted || (attributes & ATTR_TRANSACTIONAL) === 0) return !control;
    // Nothing aborted ahead or open: every data batch is kept (the shared filters).
    if (this.upcoming.length === 0 && this.abortedProducers.size === 0) return !control;
    const last = batchLastOffset(buf, pos);
    while (
      this.upcoming.length > 0 &&
      this.upcoming[this.upcoming.length - 1]!.firstOffset <= last
    ) {
      this.abortedProducers.add(this.upcoming.pop()!.producerId);
    }
    const producerId = readInt64(buf, pos + PRODUCER_ID);
    if (control) {
      // The ABORT marker ends its producer's aborted transaction.
      const marker = decodeRecords(buf, pos)[0];
      if (marker && controlRecordType(marker.key) === ControlType.ABORT) {
        this.abortedProducers.delete(producerId);
      }
      return false;
    }
    return !this.abortedProducers.has(producerId);
  }
}
