/**
 * Reads into lent buffers (a Fetch's answer buffers): what a read asks for, and that
 * it answers the same whole batches as a read into a buffer of its own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import type { ReadBuffers } from '../../../../src/broker/log/segment.ts';
import { iterateBatches } from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { batchOf, tempDir, topicConfig } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
let log: PartitionLog;

/** Lends buffers filled with 0xee, so bytes a read did not write show. */
class LentBuffers implements ReadBuffers {
  readonly lent: Buffer[] = [];
  lend(length: number): Buffer {
    const b = Buffer.alloc(length, 0xee);
    this.lent.push(b);
    return b;
  }
}

/** Sizes of the batches in `records`, CRCs checked. */
const batchSizes = (records: Buffer) =>
  [...iterateBatches(records, 0, records.length, true)].map((b) => b.size);

beforeEach(async () => {
  tmp = tempDir();
  log = PartitionLog.open({
    dir: tmp.dir,
    topic: 't',
    partition: 0,
    config: topicConfig(),
    clock: new ManualClock(1_000_000),
  });
  // Batches of 1, 30 and 3 records of 2 KB: about 2, 60 and 6 KB.
  for (const [start, count] of [
    [0, 1],
    [1, 30],
    [31, 3],
  ] as const) {
    await log.append(batchOf(count, { start, valueBytes: 2000 }));
  }
});
afterEach(async () => {
  await log.close();
  tmp.remove();
});

describe('PartitionLog.read into lent buffers', () => {
  it('reads into one lent buffer of the length it reads, and answers the same batches as a plain read', () => {
    for (const [offset, maxBytes] of [
      [0, 1 << 20],
      [0, 70_000],
      [1, 100_000],
      [31, 1 << 20],
    ] as const) {
      const buffers = new LentBuffers();
      const read = log.read(offset, maxBytes, true, buffers).records;
      const plain = log.read(offset, maxBytes, true).records;
      expect(read.equals(plain)).toBe(true);
      expect(buffers.lent).toHaveLength(1);
      expect(read.buffer === buffers.lent[0]!.buffer, 'the lent buffer').toBe(true);
      expect(buffers.lent[0]!.length).toBeGreaterThanOrEqual(read.length);
    }
  });

  it('cuts a read that ends inside a batch to the whole batches before it', () => {
    const buffers = new LentBuffers();
    const read = log.read(0, 40_000, true, buffers).records;
    expect(batchSizes(read)).toHaveLength(1);
    expect(buffers.lent[0]!.length).toBe(40_000);
  });

  it('reads a first batch larger than maxBytes whole, lending once its size, when at least one batch is due', () => {
    const buffers = new LentBuffers();
    const read = log.read(1, 1000, true, buffers).records;
    expect(batchSizes(read)).toEqual([read.length]);
    expect(read.length).toBeGreaterThan(60_000);
    expect(buffers.lent.map((b) => b.length)).toEqual([read.length]);
  });

  it('lends nothing when the first batch does not fit and none is due, nor for an empty read', () => {
    const buffers = new LentBuffers();
    expect(log.read(1, 1000, false, buffers).records.length).toBe(0);
    expect(log.read(log.logEndOffset, 1 << 20, true, buffers).records.length).toBe(0);
    expect(buffers.lent).toEqual([]);
  });
});
