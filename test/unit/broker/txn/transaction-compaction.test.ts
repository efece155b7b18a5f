/**
 * Compaction and transactions: the cleaner never compacts past the last stable
 * offset (an open transaction may yet commit or abort), and records of aborted
 * transactions never supersede committed ones: they are removed, their ABORT marker
 * stays.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LogCleaner } from '../../../../src/broker/log/log-cleaner.ts';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { ProducerStateStore } from '../../../../src/broker/producer/producer-state-store.ts';
import { encodeMarkerBatch } from '../../../../src/protocol/control-record.ts';
import {
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

function compactedLog(): { log: PartitionLog; clock: ManualClock } {
  const tmp = tempDir('txn-clean-');
  cleanups.push(tmp.remove);
  const clock = new ManualClock(10_000_000);
  const log = PartitionLog.open({
    dir: tmp.dir,
    topic: 'compacted',
    partition: 0,
    config: topicConfig({ 'cleanup.policy': ['compact'] }),
    clock,
  });
  cleanups.push(() => log.close());
  return { log, clock };
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
    // Left: the committed record and the ABORT marker.
    const { records } = log.read(0, 1 << 20);
    const batches = [...iterateBatches(records)].map(({ position }) =>
      readBatchHeader(records, position),
    );
    expect(batches.map((h) => [h.baseOffset, h.control, h.recordCount])).toEqual([
      [0, false, 1],
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
