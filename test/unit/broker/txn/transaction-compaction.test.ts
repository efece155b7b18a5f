/**
 * Compaction and transactions: the cleaner never compacts past the last stable
 * offset (an open transaction may yet commit or abort), and records of aborted
 * transactions never supersede committed ones: they are removed. A COMMIT or ABORT
 * marker stays while a record of its transaction does; then, like a tombstone, it
 * gets a delete horizon (clean time + delete.retention.ms) and a cleaning after that
 * removes it, while the aborted-transaction index loses its entry as soon as the
 * marker is deletable. A read_committed reader sees the same records throughout.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LogCleaner } from '../../../../src/broker/log/log-cleaner.ts';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { ProducerStateStore } from '../../../../src/broker/producer/producer-state-store.ts';
import { encodeMarkerBatch, readMarker } from '../../../../src/protocol/control-record.ts';
import {
  decodeRecords,
  encodeBatch,
  iterateBatches,
  readBatchHeader,
} from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { tempDir, topicConfig } from '../log/log-test-helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const record = (value: string) => ({
  timestamp: 1000,
  key: Buffer.from('k'),
  value: Buffer.from(value),
});

const DELETE_RETENTION_MS = 60_000;

function compactedLog(): { log: PartitionLog; clock: ManualClock; reopen: () => PartitionLog } {
  const tmp = tempDir('txn-clean-');
  cleanups.push(tmp.remove);
  const clock = new ManualClock(10_000_000);
  const open = () => {
    const log = PartitionLog.open({
      dir: tmp.dir,
      topic: 'compacted',
      partition: 0,
      config: topicConfig({
        'cleanup.policy': ['compact'],
        'delete.retention.ms': DELETE_RETENTION_MS,
      }),
      clock,
    });
    cleanups.push(() => log.close());
    return log;
  };
  const log = open();
  return {
    log,
    clock,
    reopen: () => {
      void log.close();
      return open();
    },
  };
}

const keyed = (key: string, value: string) => ({
  timestamp: 1000,
  key: Buffer.from(key),
  value: Buffer.from(value),
});

/** Appends one transaction of `producerId` (one batch per record) and its marker, indexing an abort as the marker writer does. */
async function transaction(
  log: PartitionLog,
  producerId: number,
  sequence: number,
  records: Array<[string, string]>,
  commit: boolean,
): Promise<void> {
  let first = -1;
  for (const [i, [key, value]] of records.entries()) {
    const { baseOffset } = await log.append(
      encodeBatch({
        records: [keyed(key, value)],
        producerId,
        producerEpoch: 0,
        baseSequence: sequence + i,
        transactional: true,
      }),
    );
    if (first < 0) first = baseOffset;
  }
  const marker = encodeMarkerBatch({
    producerId,
    producerEpoch: 0,
    commit,
    coordinatorEpoch: 0,
    timestamp: 1000,
  });
  const { baseOffset } = await log.append(marker);
  if (!commit) {
    log.recordAbortedTxn({
      producerId,
      firstOffset: first,
      lastOffset: baseOffset,
      lastStableOffset: baseOffset + 1,
    });
  }
}

/**
 * What a read_committed consumer delivers (Kafka's fetcher): it reads up to the LSO
 * with the aborted transactions the broker answers, starts dropping a producer's
 * transactional batches once it passes an aborted transaction's first offset, and
 * stops at that producer's ABORT marker.
 */
function readCommitted(log: PartitionLog): string[] {
  const upTo = log.logEndOffset; // every transaction here has ended: LSO = log end
  const aborted = [...log.abortedTransactions(0, upTo)].sort(
    (a, b) => a.firstOffset - b.firstOffset,
  );
  const abortedProducers = new Set<number>();
  const out: string[] = [];
  for (const { records, position } of allBatches(log)) {
    const h = readBatchHeader(records, position);
    const last = h.baseOffset + h.lastOffsetDelta;
    while (aborted.length > 0 && aborted[0]!.firstOffset <= last) {
      abortedProducers.add(aborted.shift()!.producerId);
    }
    if (h.control) {
      if (readMarker(records, position)?.commit === false) abortedProducers.delete(h.producerId);
      continue;
    }
    if (h.transactional && abortedProducers.has(h.producerId)) continue;
    for (const r of decodeRecords(records, position)) out.push(`${r.key}=${r.value}`);
  }
  return out;
}

/** Every batch of the log, segment after segment, as Fetch would serve them. */
function allBatches(log: PartitionLog): Array<{ records: Buffer; position: number }> {
  const out: Array<{ records: Buffer; position: number }> = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const { records } = log.read(offset, 1 << 20);
    if (records.length === 0) break;
    for (const { position } of iterateBatches(records)) {
      out.push({ records, position });
      const h = readBatchHeader(records, position);
      offset = Math.max(offset, h.baseOffset + h.lastOffsetDelta + 1);
    }
  }
  return out;
}

/** Offset and kind of every batch: data with its record count, or the marker it holds. */
function layout(log: PartitionLog): string[] {
  return allBatches(log).map(({ records, position }) => {
    const h = readBatchHeader(records, position);
    if (!h.control) return `${h.baseOffset}:data(${h.recordCount})`;
    const marker = readMarker(records, position);
    const kind = marker === undefined ? 'empty' : marker.commit ? 'COMMIT' : 'ABORT';
    return `${h.baseOffset}:${kind}${h.hasDeleteHorizon ? `@${h.baseTimestamp}` : ''}`;
  });
}

describe('compaction and transactions', () => {
  it('removes the records of an aborted transaction instead of letting them supersede committed ones', async () => {
    const { log, clock } = compactedLog();
    const states = new ProducerStateStore(getLogger('test'));
    await log.append(encodeBatch({ records: [record('committed')] })); // 0
    await log.append(
      encodeBatch({
        records: [record('aborted')],
        producerId: 9,
        producerEpoch: 0,
        baseSequence: 0,
        transactional: true,
      }),
    ); // 1
    states.stateFor(log);
    await log.append(
      encodeMarkerBatch({
        producerId: 9,
        producerEpoch: 0,
        commit: false,
        coordinatorEpoch: 0,
        timestamp: 1000,
      }),
    );
    states.onMarker(log, 9, 0, 2, false, 1000); // as the marker writer does
    log.roll();
    const cleaner = new LogCleaner({ clock, lastStableOffset: (l) => states.lastStableOffset(l) });
    await cleaner.clean(log);
    // Left: the committed record, producer 9's last data batch emptied (its sequence
    // for producer state, as Kafka keeps it) and the ABORT marker that ends it.
    const { records } = log.read(0, 1 << 20);
    const batches = [...iterateBatches(records)].map(({ position }) =>
      readBatchHeader(records, position),
    );
    expect(batches.map((h) => [h.baseOffset, h.control, h.recordCount])).toEqual([
      [0, false, 1],
      [1, false, 0],
      [2, true, 1],
    ]);
    expect([...log.records()][0]!.value!.toString()).toBe('committed');
  });

  it('keeps the records of an open transaction and everything after them', async () => {
    const { log, clock } = compactedLog();
    await log.append(encodeBatch({ records: [record('old')] })); // 0
    log.roll();
    await log.append(
      encodeBatch({
        records: [record('in-open-txn')],
        producerId: 9,
        producerEpoch: 0,
        baseSequence: 0,
        transactional: true,
      }),
    ); // 1
    log.roll();
    await log.append(encodeBatch({ records: [record('new')] })); // 2
    log.roll();

    // Producer state read back from the log: producer 9's transaction is open at 1.
    const states = new ProducerStateStore(getLogger('test'));
    expect(states.lastStableOffset(log)).toBe(1);
    const cleaner = new LogCleaner({ clock, lastStableOffset: (l) => states.lastStableOffset(l) });
    await cleaner.clean(log);
    expect([...log.records()].map((r) => `${r.offset}:${r.value}`)).toEqual([
      '0:old',
      '1:in-open-txn',
      '2:new',
    ]);
  });
});

describe('compaction of transaction markers', () => {
  it('removes a marker only after its records are gone and delete.retention.ms has passed, read_committed unchanged throughout', async () => {
    const { log, clock, reopen } = compactedLog();
    await transaction(log, 7, 0, [['a', 'a1']], true); // 0, COMMIT 1
    await transaction(
      log,
      7,
      1,
      [
        ['a', 'a-aborted'],
        ['c', 'c-aborted'],
      ],
      false,
    ); // 2 3, ABORT 4
    log.roll();
    await transaction(log, 7, 3, [['b', 'b1']], true); // 5, COMMIT 6: producer 7's last
    await log.append(encodeBatch({ records: [keyed('a', 'a2')] })); // 7: supersedes a1
    log.roll();
    const committed = ['b=b1', 'a=a2'];
    expect(readCommitted(log)).toEqual(['a=a1', ...committed]);
    const cleaner = new LogCleaner({ clock });

    // 1st cleaning: the records go (a1 superseded, the aborted ones dropped); their
    // markers stay, since this cleaning still saw them, and so does the index entry.
    await cleaner.clean(log);
    expect(layout(log)).toEqual(['1:COMMIT', '4:ABORT', '5:data(1)', '6:COMMIT', '7:data(1)']);
    expect(log.abortedTransactions(0, log.logEndOffset)).toEqual([
      { producerId: 7, firstOffset: 2, lastOffset: 4, lastStableOffset: 5 },
    ]);
    expect(readCommitted(log)).toEqual(committed);

    // 2nd: nothing of their transactions is left, so both markers are deletable: they
    // get a horizon, and the ABORT loses its index entry at once.
    const horizon = clock.now() + DELETE_RETENTION_MS;
    const second = await cleaner.clean(log);
    expect(second.earliestDeleteHorizon).toBe(horizon);
    expect(layout(log)).toEqual([
      `1:COMMIT@${horizon}`,
      `4:ABORT@${horizon}`,
      '5:data(1)',
      '6:COMMIT',
      '7:data(1)',
    ]);
    expect(log.abortedTransactions(0, log.logEndOffset)).toEqual([]);
    expect(readCommitted(log)).toEqual(committed);

    // Before the horizon a cleaning keeps them; from it on, the cleaner is due and
    // removes them. The last COMMIT stays: its record is producer 7's last data.
    clock.advance(DELETE_RETENTION_MS - 1);
    expect(cleaner.candidate(log)).toBeUndefined();
    expect((await cleaner.clean(log)).markersRemoved).toBe(0);
    expect(layout(log)).toHaveLength(5);
    clock.advance(1);
    expect(cleaner.candidate(log)?.reason).toBe('delete horizon');
    expect((await cleaner.clean(log)).markersRemoved).toBe(2);
    expect(layout(log)).toEqual(['5:data(1)', '6:COMMIT', '7:data(1)']);
    expect(readCommitted(log)).toEqual(committed);

    // On disk, after a restart with no producer snapshot: no index entry comes back,
    // and producer state rebuilt from the log sees no transaction left open.
    const reopened = reopen();
    expect(reopened.abortedTransactions(0, reopened.logEndOffset)).toEqual([]);
    expect(readdirSync(reopened.dir).filter((f) => f.endsWith('.swap'))).toEqual([]);
    const states = new ProducerStateStore(getLogger('test'));
    expect(states.lastStableOffset(reopened)).toBe(reopened.highWatermark);
    expect(readCommitted(reopened)).toEqual(committed);
  });

  it("empties a producer's last marker past its horizon instead of removing it", async () => {
    const { log, clock } = compactedLog();
    // Producer 8's only transaction aborts; it never writes data again.
    await transaction(log, 8, 0, [['k', 'aborted']], false); // 0, ABORT 1
    await log.append(encodeBatch({ records: [keyed('k', 'plain')] })); // 2
    log.roll();
    const cleaner = new LogCleaner({ clock });
    await cleaner.clean(log); // the aborted record goes; its batch, 8's last data, is kept empty
    expect(layout(log)).toEqual(['0:data(0)', '1:ABORT', '2:data(1)']);
    // The empty batch still counts as the transaction's: the marker must end it.
    await cleaner.clean(log);
    clock.advance(DELETE_RETENTION_MS);
    await cleaner.clean(log);
    expect(layout(log)).toEqual(['0:data(0)', '1:ABORT', '2:data(1)']);
    expect(log.abortedTransactions(0, log.logEndOffset)).toHaveLength(1);
    expect(readCommitted(log)).toEqual(['k=plain']);
  });

  it('removes a COMMIT marker of a transaction that wrote nothing to the partition', async () => {
    const { log, clock } = compactedLog();
    await log.append(encodeBatch({ records: [keyed('k', 'v1')] })); // 0
    await transaction(log, 9, 0, [['k', 'in-txn']], true); // 1, COMMIT 2
    await log.append(
      encodeMarkerBatch({
        producerId: 5,
        producerEpoch: 0,
        commit: true,
        coordinatorEpoch: 0,
        timestamp: 1000,
      }),
    ); // 3: producer 5 added the partition but wrote nothing to it
    await transaction(log, 5, 0, [['j', 'later']], true); // 4, COMMIT 5
    log.roll();
    const cleaner = new LogCleaner({ clock });
    await cleaner.clean(log);
    expect(layout(log)).toEqual([
      '1:data(1)',
      '2:COMMIT',
      `3:COMMIT@${clock.now() + DELETE_RETENTION_MS}`,
      '4:data(1)',
      '5:COMMIT',
    ]);
    clock.advance(DELETE_RETENTION_MS);
    await cleaner.clean(log);
    expect(layout(log)).toEqual(['1:data(1)', '2:COMMIT', '4:data(1)', '5:COMMIT']);
    expect(readCommitted(log)).toEqual(['k=in-txn', 'j=later']);
  });

  it('keeps a marker past its horizon until a producer state snapshot lies beyond it', async () => {
    const { log, clock, reopen } = compactedLog();
    await log.append(
      encodeBatch({
        records: [keyed('a', 'a1')],
        producerId: 7,
        producerEpoch: 0,
        baseSequence: 0,
        transactional: true,
      }),
    ); // 0
    // A snapshot taken while the transaction is open: a restart replays from offset 1.
    const early = new ProducerStateStore(getLogger('test'));
    early.stateFor(log);
    early.snapshotAll();
    await log.append(
      encodeMarkerBatch({
        producerId: 7,
        producerEpoch: 0,
        commit: true,
        coordinatorEpoch: 0,
        timestamp: 1000,
      }),
    ); // COMMIT 1
    await transaction(log, 7, 1, [['a', 'a2']], true); // 2, COMMIT 3
    log.roll();
    const cleaner = new LogCleaner({ clock });
    await cleaner.clean(log); // a1 goes
    await cleaner.clean(log); // its COMMIT gets a horizon
    clock.advance(DELETE_RETENTION_MS);
    expect(cleaner.candidate(log)?.reason).toBe('delete horizon');
    expect((await cleaner.clean(log)).markersRemoved).toBe(0);
    // Kept, and not asked for again until something else makes the log due.
    expect(layout(log)).toEqual([`1:COMMIT@${clock.now()}`, '2:data(1)', '3:COMMIT']);
    expect(cleaner.candidate(log)).toBeUndefined();
    expect(new ProducerStateStore(getLogger('test')).lastStableOffset(log)).toBe(log.highWatermark);

    // A snapshot past it: now a restart never replays the marker, so it may go.
    const later = new ProducerStateStore(getLogger('test'));
    later.stateFor(log);
    later.snapshotAll();
    expect((await cleaner.clean(log)).markersRemoved).toBe(1);
    expect(layout(log)).toEqual(['2:data(1)', '3:COMMIT']);
    const reopened = reopen();
    expect(new ProducerStateStore(getLogger('test')).lastStableOffset(reopened)).toBe(
      reopened.highWatermark,
    );
    expect(readCommitted(reopened)).toEqual(['a=a2']);
  });
});
