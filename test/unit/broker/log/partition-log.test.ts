import { cpSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogError } from '../../../../src/broker/log/errors.ts';
import { CHECKPOINT_FILE } from '../../../../src/broker/log/log-checkpoint.ts';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { CompressionCodec } from '../../../../src/protocol/compression.ts';
import {
  batchBaseOffset,
  checkBatch,
  iterateBatches,
  readBatchHeader,
} from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { batchOf, tempDir, topicConfig } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
let log: PartitionLog | undefined;
const clock = new ManualClock(1_000_000);

function open(
  overrides: Record<string, unknown> = {},
  options: { dir?: string; random?: () => number } = {},
): PartitionLog {
  log = PartitionLog.open({
    dir: options.dir ?? tmp.dir,
    topic: 't',
    partition: 0,
    config: topicConfig(overrides),
    clock,
    random: options.random,
  });
  return log;
}

/** Draws `values` in turn, then the last one forever. */
function draws(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}

const fileSize = (path: string) => statSync(path).size;

beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await log?.close();
  log = undefined;
  tmp.remove();
});

async function expectLogError(
  p: Promise<unknown> | (() => unknown),
  kafkaError: string,
): Promise<void> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(LogError);
    expect((e as LogError).kafkaError).toBe(kafkaError);
    return;
  }
  throw new Error(`expected ${kafkaError}`);
}

describe('PartitionLog', () => {
  it('assigns consecutive offsets and reads every record back across many segments', async () => {
    const log = open({ 'segment.bytes': 4096, 'index.interval.bytes': 200 });
    let expected = 0;
    for (let i = 0; i < 200; i++) {
      const count = 1 + (i % 7);
      const codec = (i % 5) as CompressionCodec;
      const result = await log.append(batchOf(count, { start: expected, codec }));
      expect(result.baseOffset).toBe(expected);
      expect(result.lastOffset).toBe(expected + count - 1);
      expected += count;
    }
    expect(log.segments.length).toBeGreaterThan(5);
    expect(log.logEndOffset).toBe(expected);
    const values = [...log.records(0)].map((r) => [r.offset, r.value?.toString()]);
    expect(values).toEqual(Array.from({ length: expected }, (_, i) => [i, `value-${i}`]));
  });

  it('a read from any offset starts with the batch holding it and returns whole valid batches', async () => {
    const log = open({ 'segment.bytes': 2048, 'index.interval.bytes': 100 });
    for (let i = 0; i < 100; i++) await log.append(batchOf(3, { start: i * 3 }));
    for (let offset = 0; offset < 300; offset += 7) {
      const { records, highWatermark, logStartOffset } = log.read(offset, 500, true);
      expect(highWatermark).toBe(300);
      expect(logStartOffset).toBe(0);
      const batches = [...iterateBatches(records, 0, records.length, true)];
      expect(batches.length).toBeGreaterThan(0);
      const first = batchBaseOffset(records, 0);
      expect(first).toBeLessThanOrEqual(offset);
      expect(first + readBatchHeader(records, 0).lastOffsetDelta).toBeGreaterThanOrEqual(offset);
    }
  });

  it('returns one whole batch larger than maxBytes when minOneBatch is set, and nothing otherwise', async () => {
    const log = open();
    await log.append(batchOf(50, { valueBytes: 100 }));
    expect(log.read(0, 100, true).records.length).toBeGreaterThan(100);
    expect(log.read(0, 100, false).records.length).toBe(0);
  });

  it('reading at the log end returns nothing; outside [start, end] is OFFSET_OUT_OF_RANGE', async () => {
    const log = open();
    await log.append(batchOf(5));
    expect(log.read(5, 1000).records.length).toBe(0);
    await expectLogError(() => log.read(6, 1000), 'OFFSET_OUT_OF_RANGE');
    await expectLogError(() => log.read(-1, 1000), 'OFFSET_OUT_OF_RANGE');
  });

  it('stamps LogAppendTime batches with the clock and a valid CRC', async () => {
    const log = open({ 'message.timestamp.type': 'LogAppendTime' });
    clock.set(5_000_000);
    const result = await log.append(batchOf(3, { codec: CompressionCodec.gzip }));
    expect(result.logAppendTime).toBe(5_000_000);
    const { records } = log.read(0, 10_000);
    expect(checkBatch(records, 0, records.length)).toBe(records.length);
    expect([...log.records(0)].map((r) => r.timestamp)).toEqual([5_000_000, 5_000_000, 5_000_000]);
  });

  it('rejects a batch with a bad CRC as CORRUPT_MESSAGE and writes nothing', async () => {
    const log = open();
    const batch = batchOf(3);
    batch[batch.length - 1] ^= 1;
    await expectLogError(log.append(Buffer.concat([batchOf(1), batch])), 'CORRUPT_MESSAGE');
    expect(log.logEndOffset).toBe(0);
    expect(log.size).toBe(0);
  });

  it('rejects a batch above max.message.bytes as MESSAGE_TOO_LARGE', async () => {
    const log = open({ 'max.message.bytes': 500 });
    await expectLogError(log.append(batchOf(20, { valueBytes: 100 })), 'MESSAGE_TOO_LARGE');
  });

  it('rejects keyless records on compacted topics as INVALID_RECORD, even compressed', async () => {
    const log = open({ 'cleanup.policy': ['compact'] });
    const { encodeBatch } = await import('../../../../src/protocol/record-batch.ts');
    const keyless = encodeBatch({
      codec: CompressionCodec.snappy,
      records: [
        { timestamp: 1, key: Buffer.from('k'), value: null },
        { timestamp: 1, key: null, value: Buffer.from('v') },
      ],
    });
    await expectLogError(log.append(keyless), 'INVALID_RECORD');
    expect((await log.append(batchOf(2, { codec: CompressionCodec.snappy }))).baseOffset).toBe(0);
  });

  it('rolls the active segment after segment.ms on the injected clock', async () => {
    const log = open({ 'segment.ms': 60_000 });
    await log.append(batchOf(1));
    clock.advance(59_999);
    await log.append(batchOf(1));
    expect(log.segments.length).toBe(1);
    clock.advance(1);
    await log.append(batchOf(1));
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 2]);
  });

  it('segment.jitter.ms takes a random share off segment.ms for each segment, drawn anew at every roll', async () => {
    const log = open(
      { 'segment.ms': 60_000, 'segment.jitter.ms': 10_000 },
      { random: draws(0.5, 0.25) },
    );
    await log.append(batchOf(1));
    clock.advance(54_999);
    await log.append(batchOf(1));
    expect(log.segments.length).toBe(1);
    clock.advance(1); // 60 000 - 5 000 (0.5 of the jitter)
    await log.append(batchOf(1));
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 2]);
    clock.advance(57_499);
    await log.append(batchOf(1));
    expect(log.segments.length).toBe(2);
    clock.advance(1); // 60 000 - 2 500 (0.25 of the jitter)
    await log.append(batchOf(1));
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 2, 4]);
  });

  it('a segment.jitter.ms above segment.ms draws within segment.ms, as Kafka bounds it', async () => {
    const log = open(
      { 'segment.ms': 60_000, 'segment.jitter.ms': 600_000 },
      { random: draws(0.5) },
    );
    expect(log.activeSegment.rollJitterMs).toBe(30_000);
    await log.append(batchOf(1));
    clock.advance(29_999);
    await log.append(batchOf(1));
    expect(log.segments.length).toBe(1);
    clock.advance(1);
    await log.append(batchOf(1));
    expect(log.segments.length).toBe(2);
  });

  it('preallocate extends each new segment file to segment.bytes, counts only the data, and trims at roll and close', async () => {
    const config = { preallocate: true, 'segment.bytes': 16 * 1024 };
    let log = open(config);
    expect(fileSize(log.activeSegment.logPath)).toBe(16 * 1024);
    for (let i = 0; i < 100; i++) await log.append(batchOf(3, { start: i * 3, valueBytes: 100 }));
    const [first, ...rest] = log.segments;
    expect(rest.length).toBeGreaterThan(0);
    // Rolled segments are cut back to their data; the active one is still preallocated.
    for (const s of log.segments.slice(0, -1)) expect(fileSize(s.logPath)).toBe(s.size);
    expect(fileSize(log.activeSegment.logPath)).toBe(16 * 1024);
    // What DescribeLogDirs and retention.bytes see: the data, not the preallocated tail.
    const onDisk = log.segments.reduce((sum, s) => sum + fileSize(s.logPath), 0);
    expect(log.size).toBe(onDisk - (16 * 1024 - log.activeSegment.size));
    expect(first.size).toBeLessThanOrEqual(16 * 1024);
    const active = log.activeSegment;
    await log.close();
    expect(fileSize(active.logPath)).toBe(active.size);
    log = open(config);
    expect(log.recoveryInfo).toEqual({ truncatedBytes: 0, scannedSegments: 0 });
    expect([...log.records(0)].length).toBe(300);
  });

  it('after a crash, a preallocated segment is read up to its zero tail: every record is there and appends continue', async () => {
    const config = { preallocate: true, 'segment.bytes': 16 * 1024, 'flush.messages': 1 };
    const live = open(config, { dir: join(tmp.dir, 'live') });
    for (let i = 0; i < 60; i++) await live.append(batchOf(3, { start: i * 3, valueBytes: 100 }));
    expect(fileSize(live.activeSegment.logPath)).toBe(16 * 1024);
    // The files as a crash would leave them: the active segment still preallocated.
    const crashed = join(tmp.dir, 'crashed');
    cpSync(live.dir, crashed, { recursive: true });
    const reopened = PartitionLog.open({
      dir: crashed,
      topic: 't',
      partition: 0,
      config: topicConfig(config),
      clock,
    });
    try {
      expect(reopened.recoveryInfo.truncatedBytes).toBe(0);
      expect(reopened.logEndOffset).toBe(180);
      expect([...reopened.records(0)].map((r) => r.offset)).toEqual(
        Array.from({ length: 180 }, (_, i) => i),
      );
      expect(fileSize(reopened.activeSegment.logPath)).toBe(reopened.activeSegment.size);
      expect((await reopened.append(batchOf(2))).baseOffset).toBe(180);
      expect([...reopened.records(178)].map((r) => r.offset)).toEqual([178, 179, 180, 181]);
    } finally {
      await reopened.close();
    }
  });

  it('a rolled segment whose trim did not reach the disk is recovered to its data without a rebuild', async () => {
    const config = { preallocate: true, 'segment.bytes': 16 * 1024 };
    let log = open(config);
    for (let i = 0; i < 100; i++) await log.append(batchOf(3, { start: i * 3, valueBytes: 100 }));
    const first = log.segments[0].logPath;
    await log.close();
    truncateSync(first, 16 * 1024); // its preallocated length, as if the trim was lost
    log = open(config);
    expect(log.recoveryInfo).toEqual({ truncatedBytes: 0, scannedSegments: 0 });
    expect(fileSize(first)).toBe(log.segments[0].size);
    expect([...log.records(0)].length).toBe(300);
  });

  it('finds the earliest offset with a timestamp at or after the target through the time index', async () => {
    const log = open({ 'segment.bytes': 3000, 'index.interval.bytes': 150 });
    for (let i = 0; i < 100; i++) await log.append(batchOf(4, { start: i * 4 })); // timestamps 1000 + offset
    for (const target of [0, 1000, 1001, 1137, 1250, 1399]) {
      expect(log.offsetForTimestamp(target)).toEqual({
        offset: Math.max(0, target - 1000),
        timestamp: Math.max(1000, target),
      });
    }
    expect(log.offsetForTimestamp(1400)).toBeUndefined();
    expect(log.earliestOffset()).toBe(0);
    expect(log.latestOffset()).toBe(400);
  });

  it('deleteRecordsBefore advances the log start offset, deletes whole segments, and persists it', async () => {
    let log = open({ 'segment.bytes': 1000 });
    for (let i = 0; i < 50; i++) await log.append(batchOf(2, { start: i * 2 }));
    const segmentsBefore = log.segments.length;
    expect(await log.deleteRecordsBefore(57)).toBe(57);
    expect(log.segments.length).toBeLessThan(segmentsBefore);
    expect(log.segments[0].baseOffset).toBeLessThanOrEqual(57);
    await expectLogError(() => log.read(56, 1000), 'OFFSET_OUT_OF_RANGE');
    await log.close();
    log = open({ 'segment.bytes': 1000 });
    expect(log.logStartOffset).toBe(57);
    expect([...log.records(57)][0].offset).toBe(57);
  });

  it('waitForData resolves when the end offset moves past the given offset, or on abort', async () => {
    const log = open();
    let woke = false;
    const waiting = log.waitForData(0).then(() => {
      woke = true;
    });
    await Promise.resolve();
    expect(woke).toBe(false);
    await log.append(batchOf(1));
    await waiting;
    expect(woke).toBe(true);
    const controller = new AbortController();
    const aborted = log.waitForData(5, controller.signal);
    controller.abort();
    await aborted;
  });

  it('with flush.messages=1, concurrent appends all resolve after being fsynced, sharing rounds', async () => {
    const log = open({ 'flush.messages': 1 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => log.append(batchOf(2, { start: i * 2 }))),
    );
    expect(results.map((r) => r.baseOffset)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    expect(log.segments[0].unflushedBytes).toBe(0);
  });

  it('a clean close and reopen scans nothing and keeps every offset', async () => {
    let log = open({ 'segment.bytes': 2000 });
    for (let i = 0; i < 60; i++) await log.append(batchOf(3, { start: i * 3 }));
    await log.close();
    log = open({ 'segment.bytes': 2000 });
    expect(log.recoveryInfo).toEqual({ truncatedBytes: 0, scannedSegments: 0 });
    expect(log.logEndOffset).toBe(180);
    expect([...log.records(0)].length).toBe(180);
    expect((await log.append(batchOf(1))).baseOffset).toBe(180);
  });

  it('closing a partition nothing was written to since it opened leaves its checkpoint file as it was', async () => {
    let log = open();
    await log.append(batchOf(3));
    await log.close();
    const checkpoint = join(tmp.dir, CHECKPOINT_FILE);
    const before = statSync(checkpoint);

    log = open();
    await log.close();

    // Replacing the file (write a temporary, rename) gives it a new inode.
    expect(statSync(checkpoint).ino).toBe(before.ino);
    log = open();
    expect(log.recoveryInfo).toEqual({ truncatedBytes: 0, scannedSegments: 0 });
    expect(log.logEndOffset).toBe(3);
    await log.append(batchOf(1));
    await log.close();
    expect(statSync(checkpoint).ino).not.toBe(before.ino);
  });
});
