import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { segmentsToDelete } from '../../../../src/broker/log/retention.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { batchOf, tempDir, topicConfig } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
let log: PartitionLog | undefined;

beforeEach(() => {
  tmp = tempDir('retention-');
});
afterEach(async () => {
  await log?.close();
  log = undefined;
  tmp.remove();
});

const HOUR = 3_600_000;

describe('retention', () => {
  it('by time deletes whole segments whose newest record is older than retention.ms, never the active one', async () => {
    const clock = new ManualClock(10 * HOUR);
    log = PartitionLog.open({
      dir: tmp.dir,
      topic: 't',
      partition: 0,
      config: topicConfig({ 'retention.ms': HOUR, 'segment.ms': HOUR / 2 }),
      clock,
    });
    // Five segments, rolled by segment.ms, each holding records stamped with the clock.
    for (let s = 0; s < 5; s++) {
      for (let i = 0; i < 3; i++)
        await log.append(batchOf(2, { start: s * 6 + i * 2, timestamp: clock.now() }));
      clock.advance(HOUR / 2);
    }
    expect(log.segments.length).toBe(5);
    // Now = 12.5h; segments written at 10h, 10.5h, 11h, 11.5h, 12h. Older than 11.5h: the first three.
    expect(log.deleteOldSegments()).toBe(3);
    expect(log.logStartOffset).toBe(18);
    clock.advance(10 * HOUR);
    log.deleteOldSegments();
    expect(log.segments.length).toBe(1);
    expect(log.logStartOffset).toBe(24);
    expect([...log.records()].map((r) => r.offset)).toEqual([24, 25, 26, 27, 28, 29]);
  });

  it('by bytes deletes the oldest segments while the rest still holds retention.bytes', async () => {
    const clock = new ManualClock(0);
    log = PartitionLog.open({
      dir: tmp.dir,
      topic: 't',
      partition: 0,
      config: topicConfig({ 'segment.bytes': 1000 }),
      clock,
    });
    for (let i = 0; i < 40; i++) await log.append(batchOf(2, { start: i * 2 }));
    const sizes = log.segments.map((s) => s.size);
    const total = sizes.reduce((a, b) => a + b, 0);
    const keep = total - sizes[0] - sizes[1];
    log.config = topicConfig({
      'segment.bytes': 1000,
      'retention.bytes': keep,
      'retention.ms': -1,
    });
    expect(log.deleteOldSegments()).toBe(2);
    expect(log.size).toBe(keep);
    expect(log.logStartOffset).toBe(log.segments[0].baseOffset);
  });

  it('compact-only topics are not deleted by time or size', () => {
    const segments = [
      { baseOffset: 0, size: 100, maxTimestamp: 0 },
      { baseOffset: 10, size: 100, maxTimestamp: 0 },
    ];
    expect(
      segmentsToDelete(segments, { deletePolicy: false, retentionMs: 1, retentionBytes: 1 }, 0, 1e9)
        .count,
    ).toBe(0);
    expect(
      segmentsToDelete(segments, { deletePolicy: true, retentionMs: 1, retentionBytes: -1 }, 0, 1e9)
        .count,
    ).toBe(1);
  });
});
