import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { LogCleaner } from '../../../../src/broker/log/log-cleaner.ts';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { segmentFileName } from '../../../../src/broker/log/segment.ts';
import type { CompressionCodec } from '../../../../src/protocol/compression.ts';
import { encodeBatch, readBatchHeader } from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { tempDir, topicConfig } from './log-test-helpers.ts';

const DAY = 86_400_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Op {
  key: number;
  value: string | null;
}

const opsArb = fc.array(
  fc.record({
    key: fc.integer({ min: 0, max: 5 }),
    value: fc.option(fc.string({ minLength: 1, maxLength: 30 }), { nil: null, freq: 4 }),
  }),
  { minLength: 1, maxLength: 300 },
);

function openLog(
  dir: string,
  clock: ManualClock,
  overrides: Record<string, unknown> = {},
): PartitionLog {
  const log = PartitionLog.open({
    dir,
    topic: 'c',
    partition: 0,
    config: topicConfig({
      'cleanup.policy': ['compact'],
      'segment.bytes': 600,
      'delete.retention.ms': DAY,
      ...overrides,
    }),
    clock,
  });
  cleanups.push(() => log.close());
  return log;
}

function newDir(): string {
  const tmp = tempDir('cleaner-');
  cleanups.push(tmp.remove);
  return tmp.dir;
}

/** Appends ops in batches of 1..4 records with rotating codecs; returns each op's offset. */
async function appendOps(log: PartitionLog, ops: Op[], clock: ManualClock): Promise<number[]> {
  const offsets: number[] = [];
  for (let i = 0; i < ops.length; ) {
    const n = Math.min(1 + (i % 4), ops.length - i);
    const slice = ops.slice(i, i + n);
    const result = await log.append(
      encodeBatch({
        codec: (i % 5) as CompressionCodec,
        producerId: 77,
        producerEpoch: 3,
        baseSequence: i,
        records: slice.map((op) => ({
          timestamp: clock.now(),
          key: Buffer.from(`key-${op.key}`),
          value: op.value === null ? null : Buffer.from(op.value),
        })),
      }),
    );
    for (let j = 0; j < n; j++) offsets.push(result.baseOffset + j);
    i += n;
  }
  log.roll(); // everything written becomes cleanable
  return offsets;
}

/** key -> [offset, value] of the last op per key. */
function latest(ops: Op[], offsets: number[]): Map<string, [number, string | null]> {
  const m = new Map<string, [number, string | null]>();
  ops.forEach((op, i) => {
    m.set(`key-${op.key}`, [offsets[i], op.value]);
  });
  return m;
}

function readAll(log: PartitionLog): [string, number, string | null][] {
  return [...log.records()].map((r) => [
    r.key!.toString(),
    r.offset,
    r.value === null ? null : r.value.toString(),
  ]);
}

describe('log cleaner', () => {
  it('keeps the latest record per key at its offset, then drops tombstones after delete.retention.ms', async () => {
    await fc.assert(
      fc.asyncProperty(opsArb, async (ops) => {
        const clock = new ManualClock(DAY);
        const log = openLog(newDir(), clock);
        const offsets = await appendOps(log, ops, clock);
        const expected = latest(ops, offsets);
        const cleaner = new LogCleaner({ clock });

        await cleaner.clean(log);
        const afterFirst = readAll(log);
        const offsetsSeen = afterFirst.map(([, o]) => o);
        expect(offsetsSeen).toEqual([...offsetsSeen].sort((a, b) => a - b));
        expect(new Set(offsetsSeen).size).toBe(offsetsSeen.length);
        // Exactly one record per key: the latest, tombstones included (still within retention).
        expect(afterFirst.sort((a, b) => a[1] - b[1])).toEqual(
          [...expected.entries()]
            .map(([k, [o, v]]) => [k, o, v])
            .sort((a, b) => (a[1] as number) - (b[1] as number)),
        );

        clock.advance(DAY + 1);
        await cleaner.clean(log);
        const afterSecond = readAll(log);
        expect(afterSecond).toEqual(afterFirst.filter(([, , v]) => v !== null));
        expect(log.logEndOffset).toBe(ops.length);
      }),
      { numRuns: 12 },
    );
  });

  it('cleans segments larger than its read chunk and output buffer (4 MiB each)', async () => {
    // ~13 MB in one segment: batches of 10 kB values, each key written 3 times, the
    // first change well past the first read chunk and output buffer.
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock, { 'segment.bytes': 64 * 1024 * 1024 });
    const ops: Op[] = [];
    for (let i = 0; i < 1300; i++) {
      const key = i < 500 ? i : i % 400;
      ops.push({ key, value: `${i}:`.padEnd(10_000, String.fromCharCode(97 + (i % 26))) });
    }
    const offsets: number[] = [];
    for (let i = 0; i < ops.length; i += 4) {
      const slice = ops.slice(i, i + 4);
      const result = await log.append(
        encodeBatch({
          records: slice.map((op) => ({
            timestamp: clock.now(),
            key: Buffer.from(`key-${op.key}`),
            value: Buffer.from(op.value!),
          })),
        }),
      );
      for (let j = 0; j < slice.length; j++) offsets.push(result.baseOffset + j);
    }
    log.roll();
    const expected = [...latest(ops, offsets).entries()]
      .map(([k, [o, v]]) => [k, o, v] as [string, number, string | null])
      .sort((a, b) => a[1] - b[1]);
    await new LogCleaner({ clock }).clean(log);
    const after = readAll(log);
    expect(after.length).toBe(expected.length);
    after.forEach((r, n) => {
      expect(
        r[0] === expected[n]![0] && r[1] === expected[n]![1] && r[2] === expected[n]![2],
        `record ${n}`,
      ).toBe(true);
    });
  });

  it('leaves a first cleaning of distinct keys alone, then cleans once a key repeats', async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock);
    const distinct: Op[] = Array.from({ length: 60 }, (_, i) => ({ key: i, value: `v${i}` }));
    const offsets = await appendOps(log, distinct, clock);
    const cleaner = new LogCleaner({ clock });
    const first = await cleaner.clean(log);
    expect(first.segmentsRewritten).toBe(0);
    expect(first.recordsRead).toBe(60);
    expect(first.endOffset).toBe(60);
    expect(readAll(log)).toEqual(distinct.map((op, i) => [`key-${op.key}`, offsets[i], op.value]));

    // key-3 again: its first record, in an already cleaned segment, must go.
    await appendOps(log, [{ key: 3, value: 'again' }], clock);
    const second = await cleaner.clean(log);
    expect(second.segmentsRewritten).toBeGreaterThan(0);
    const after = readAll(log);
    expect(after.filter(([k]) => k === 'key-3')).toEqual([['key-3', 60, 'again']]);
    expect(after).toHaveLength(60);
  });

  it('cleans in several passes when the offset map is too small for the dirty range', async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock);
    const ops: Op[] = Array.from({ length: 120 }, (_, i) => ({ key: (i * 7) % 6, value: `v${i}` }));
    const offsets = await appendOps(log, ops, clock);
    const expected = [...latest(ops, offsets).entries()]
      .map(([k, [o, v]]) => [k, o, v])
      .sort((a, b) => (a[1] as number) - (b[1] as number));
    // Room for 4 keys per pass: each pass maps a prefix of the dirty range only.
    const cleaner = new LogCleaner({ clock, offsetMapEntries: 4 });
    let passes = 0;
    while (passes < 60 && readAll(log).length > expected.length) {
      await cleaner.clean(log);
      passes++;
    }
    expect(passes).toBeGreaterThan(1);
    expect(readAll(log).sort((a, b) => a[1] - b[1])).toEqual(expected);
  });

  it('keeps producer id, epoch and the original offset range of surviving batches', async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock);
    const ops: Op[] = Array.from({ length: 40 }, (_, i) => ({ key: i % 3, value: `v${i}` }));
    await appendOps(log, ops, clock);
    await new LogCleaner({ clock }).clean(log);
    const { readBatchHeader, iterateBatches } = await import(
      '../../../../src/protocol/record-batch.ts'
    );
    for (const segment of log.segments) {
      segment.forEachBatch((buf, at) => {
        const h = readBatchHeader(buf, at);
        expect([h.producerId, h.producerEpoch]).toEqual([77, 3]);
        expect(h.recordCount).toBeLessThanOrEqual(h.lastOffsetDelta + 1);
      });
    }
    const { records } = log.read(0, 1 << 20);
    expect([...iterateBatches(records, 0, records.length, true)].length).toBeGreaterThan(0);
  });

  it("keeps a producer's last batch, emptied, so its sequence state survives", async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock);
    const batch = (producerId: number, value: string) =>
      encodeBatch({
        producerId,
        producerEpoch: 0,
        baseSequence: 5,
        records: [{ timestamp: clock.now(), key: Buffer.from('k'), value: Buffer.from(value) }],
      });
    await log.append(batch(1, 'old'));
    await log.append(batch(2, 'new'));
    log.roll();
    await new LogCleaner({ clock }).clean(log);
    const headers: [number, number, number, number][] = [];
    for (const segment of log.segments) {
      segment.forEachBatch((buf, at) => {
        const h = readBatchHeader(buf, at);
        headers.push([h.producerId, h.baseOffset, h.recordCount, h.baseSequence]);
      });
    }
    expect(headers).toEqual([
      [1, 0, 0, 5],
      [2, 1, 1, 5],
    ]);
    expect(readAll(log)).toEqual([['k', 1, 'new']]);
  });

  it('readers and appends running while the cleaner works always see a valid, increasing log', async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock);
    const ops: Op[] = Array.from({ length: 400 }, (_, i) => ({ key: i % 7, value: `v${i}` }));
    const offsets = await appendOps(log, ops, clock);
    const expected = latest(ops, offsets);
    let done = false;
    const cleaning = new LogCleaner({ clock }).clean(log).finally(() => {
      done = true;
    });
    let reads = 0;
    while (!done) {
      const records = readAll(log); // verifies every CRC on the way
      const seen = records.map(([, o]) => o);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      for (const [key, [offset, value]] of expected)
        expect(records).toContainEqual([key, offset, value]);
      await log.append(
        encodeBatch({
          records: [{ timestamp: clock.now(), key: Buffer.from('live'), value: null }],
        }),
      );
      reads++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await cleaning;
    expect(reads).toBeGreaterThan(1);
  });

  it('leaves records younger than min.compaction.lag.ms alone', async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock, { 'min.compaction.lag.ms': 60_000 });
    const ops: Op[] = Array.from({ length: 60 }, (_, i) => ({ key: 0, value: `v${i}` }));
    await appendOps(log, ops, clock);
    const cleaner = new LogCleaner({ clock });
    expect(cleaner.candidate(log)).toBeUndefined();
    await cleaner.clean(log);
    expect(readAll(log).length).toBe(60);
    clock.advance(60_001);
    expect(cleaner.candidate(log)?.reason).toBe('dirty ratio');
    await cleaner.clean(log);
    expect(readAll(log)).toEqual([['key-0', 59, 'v59']]);
  });

  it('is not a candidate below min.cleanable.dirty.ratio', async () => {
    const clock = new ManualClock(DAY);
    const log = openLog(newDir(), clock, { 'min.cleanable.dirty.ratio': 0.9 });
    const cleaner = new LogCleaner({ clock });
    await appendOps(
      log,
      Array.from({ length: 100 }, (_, i) => ({ key: i, value: 'x' })),
      clock,
    );
    await cleaner.clean(log);
    await appendOps(
      log,
      Array.from({ length: 10 }, (_, i) => ({ key: i, value: 'y' })),
      clock,
    );
    expect(cleaner.candidate(log)).toBeUndefined();
  });

  it('a crash mid-clean recovers to a valid log: a .cleaned file is discarded, a .swap file is completed', async () => {
    const clock = new ManualClock(DAY);
    const ops: Op[] = Array.from({ length: 120 }, (_, i) => ({
      key: i % 4,
      value: i % 17 === 0 ? null : `v${i}`,
    }));
    // Two identical logs; the second is cleaned for real, and its output is planted in the first.
    const crashedDir = newDir();
    const crashed = openLog(crashedDir, clock);
    const offsets = await appendOps(crashed, ops, clock);
    const bases = crashed.segments.map((s) => s.baseOffset);
    await crashed.close();
    const reference = openLog(newDir(), clock);
    await appendOps(reference, ops, clock);
    await new LogCleaner({ clock }).clean(reference);
    await reference.close();
    const cleanedFirst = join(reference.dir, segmentFileName(bases[0], '.log'));
    copyFileSync(cleanedFirst, join(crashedDir, segmentFileName(bases[0], '.log.swap')));
    copyFileSync(
      join(reference.dir, segmentFileName(bases[1], '.log')),
      join(crashedDir, segmentFileName(bases[1], '.log.cleaned')),
    );
    writeFileSync(
      join(crashedDir, segmentFileName(bases[2], '.log.cleaned')),
      Buffer.alloc(100, 1),
    ); // torn output

    const reopened = openLog(crashedDir, clock);
    expect(
      readdirSync(crashedDir).filter((n) => n.endsWith('.swap') || n.endsWith('.cleaned')),
    ).toEqual([]);
    const records = readAll(reopened);
    const seen = records.map(([, o]) => o);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    // Every key's latest value is still there, at its offset.
    for (const [key, [offset, value]] of latest(ops, offsets)) {
      expect(records).toContainEqual([key, offset, value]);
    }
    // The swapped-in first segment holds the cleaned content; later segments are as written.
    expect(existsSync(join(crashedDir, segmentFileName(bases[0], '.log')))).toBe(true);
    expect(reopened.logEndOffset).toBe(ops.length);
  });
});
