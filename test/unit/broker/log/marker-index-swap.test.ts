/**
 * The cleaner replaces a segment's aborted-transaction index together with its log:
 * `<base>.txnindex.swap` is written before the cleaned log is committed (renamed from
 * `.log.cleaned` to `.log.swap`), so recovery discards it while the log is
 * uncommitted and installs it once the log is committed or already in place. Never a
 * new log with the old index (an entry whose marker is gone would make readers drop a
 * later committed transaction) nor the old log with the new one (aborted records
 * shown).
 */
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { segmentFileName } from '../../../../src/broker/log/segment.ts';
import { TransactionIndex } from '../../../../src/broker/log/transaction-index.ts';
import { encodeMarkerBatch } from '../../../../src/protocol/control-record.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { tempDir, topicConfig } from './log-test-helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const clock = new ManualClock(10_000_000);
const ENTRY = { producerId: 3, firstOffset: 0, lastOffset: 1, lastStableOffset: 2 };

function open(dir: string): PartitionLog {
  const log = PartitionLog.open({
    dir,
    topic: 't',
    partition: 0,
    config: topicConfig({ 'cleanup.policy': ['compact'] }),
    clock,
  });
  cleanups.push(() => log.close());
  return log;
}

/** A closed log whose first segment holds an aborted transaction and its index entry. */
async function logWithAbortedTxn(): Promise<string> {
  const tmp = tempDir('txnindex-swap-');
  cleanups.push(tmp.remove);
  const log = open(tmp.dir);
  const value = { timestamp: 1000, key: Buffer.from('k'), value: Buffer.from('v') };
  await log.append(
    encodeBatch({
      records: [value],
      producerId: 3,
      producerEpoch: 0,
      baseSequence: 0,
      transactional: true,
    }),
  );
  await log.append(
    encodeMarkerBatch({
      producerId: 3,
      producerEpoch: 0,
      commit: false,
      coordinatorEpoch: 0,
      timestamp: 1000,
    }),
  );
  log.recordAbortedTxn(ENTRY);
  log.roll();
  await log.close();
  return tmp.dir;
}

const file = (dir: string, suffix: string) => join(dir, segmentFileName(0, suffix));
const leftovers = (dir: string) =>
  readdirSync(dir).filter((n) => n.endsWith('.swap') || n.endsWith('.cleaned'));

describe('recovery of a cleaned aborted-transaction index', () => {
  it('discards the new index while its cleaned log is uncommitted', async () => {
    const dir = await logWithAbortedTxn();
    copyFileSync(file(dir, '.log'), file(dir, '.log.cleaned'));
    writeFileSync(file(dir, '.txnindex.swap'), TransactionIndex.encode([]));
    const log = open(dir);
    expect(log.abortedTransactions(0, log.logEndOffset)).toEqual([ENTRY]);
    expect(leftovers(dir)).toEqual([]);
  });

  it('installs the new index with a committed cleaned log', async () => {
    const dir = await logWithAbortedTxn();
    copyFileSync(file(dir, '.log'), file(dir, '.log.swap'));
    writeFileSync(file(dir, '.txnindex.swap'), TransactionIndex.encode([]));
    const log = open(dir);
    expect(log.abortedTransactions(0, log.logEndOffset)).toEqual([]);
    expect(leftovers(dir)).toEqual([]);
  });

  it('installs the new index when the crash came after the cleaned log was renamed into place', async () => {
    const dir = await logWithAbortedTxn();
    writeFileSync(file(dir, '.txnindex.swap'), TransactionIndex.encode([]));
    const log = open(dir);
    expect(log.abortedTransactions(0, log.logEndOffset)).toEqual([]);
    expect(leftovers(dir)).toEqual([]);
  });
});
