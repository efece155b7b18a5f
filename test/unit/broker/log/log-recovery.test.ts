import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHECKPOINT_FILE } from '../../../../src/broker/log/log-checkpoint.ts';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { iterateBatches } from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { batchOf, tempDir, topicConfig } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
let log: PartitionLog | undefined;
const clock = new ManualClock(1_000_000);
const overrides = { 'segment.bytes': 3000, 'index.interval.bytes': 100 };

function open(): PartitionLog {
  log = PartitionLog.open({
    dir: tmp.dir,
    topic: 't',
    partition: 0,
    config: topicConfig(overrides),
    clock,
  });
  return log;
}

/** A log of 300 records in 3-record batches over several segments, closed cleanly. */
async function writeAndClose(): Promise<void> {
  const l = open();
  for (let i = 0; i < 100; i++) await l.append(batchOf(3, { start: i * 3 }));
  await l.close();
  log = undefined;
}

function files(suffix: string): string[] {
  return readdirSync(tmp.dir)
    .filter((n) => n.endsWith(suffix))
    .sort()
    .map((n) => join(tmp.dir, n));
}

function everyOffsetReadable(l: PartitionLog, end: number): void {
  for (let offset = 0; offset < end; offset++) {
    const { records } = l.read(offset, 200, true);
    const batches = [...iterateBatches(records, 0, records.length, true)];
    expect(batches.length, `offset ${offset}`).toBeGreaterThan(0);
  }
  expect([...l.records(0)].map((r) => r.offset)).toEqual(Array.from({ length: end }, (_, i) => i));
}

beforeEach(() => {
  tmp = tempDir('recovery-');
});
afterEach(async () => {
  await log?.close();
  log = undefined;
  tmp.remove();
});

describe('log recovery', () => {
  it('garbage written into every index still leaves every offset readable', async () => {
    await writeAndClose();
    for (const path of [...files('.index'), ...files('.timeindex')]) {
      const size = Math.max(statSync(path).size, 48);
      const garbage = Buffer.alloc(size);
      for (let i = 0; i < size; i++) garbage[i] = (i * 7919 + 13) & 0xff;
      writeFileSync(path, garbage);
    }
    everyOffsetReadable(open(), 300);
  });

  it('an index whose entries are ordered but point between batches is detected and rebuilt', async () => {
    await writeAndClose();
    // Increasing but wrong entries: every lookup lands between batches.
    for (const path of files('.index')) {
      const entries = Buffer.alloc(8 * 3);
      for (let i = 0; i < 3; i++) {
        entries.writeUInt32BE(i * 2 + 1, i * 8);
        entries.writeUInt32BE(i * 90 + 5, i * 8 + 4);
      }
      writeFileSync(path, entries);
    }
    everyOffsetReadable(open(), 300);
  });

  it('missing indexes are rebuilt', async () => {
    await writeAndClose();
    for (const path of [...files('.index'), ...files('.timeindex')]) unlinkSync(path);
    const l = open();
    everyOffsetReadable(l, 300);
    expect(l.segments.every((s) => s.offsetIndex.entries > 0)).toBe(true);
  });

  it('a log truncated mid-batch is cut back to the last whole batch, and says how much it cut', async () => {
    await writeAndClose();
    unlinkSync(join(tmp.dir, CHECKPOINT_FILE)); // as after a crash: nothing known to be clean
    const last = files('.log').at(-1)!;
    const size = statSync(last).size;
    truncateSync(last, size - 10);
    const l = open();
    expect(l.recoveryInfo.truncatedBytes).toBeGreaterThan(0);
    expect(l.logEndOffset).toBe(297);
    everyOffsetReadable(l, 297);
    expect((await l.append(batchOf(1))).baseOffset).toBe(297);
  });

  it.each([
    [5_000, 'longer'],
    [5, 'shorter'],
  ])(
    'a zero-filled tail %i bytes long (%s than a batch header) is the end of the log, not corruption',
    async (zeros) => {
      await writeAndClose();
      unlinkSync(join(tmp.dir, CHECKPOINT_FILE)); // as after a crash: nothing known to be clean
      const last = files('.log').at(-1)!;
      const size = statSync(last).size;
      truncateSync(last, size + zeros); // a preallocated file's unused end reads as zeros
      const l = open();
      expect(l.recoveryInfo.truncatedBytes).toBe(0);
      expect(statSync(last).size).toBe(size);
      everyOffsetReadable(l, 300);
      expect((await l.append(batchOf(1))).baseOffset).toBe(300);
    },
  );

  it('a non-zero byte after zeros is corruption: the tail is cut and counted', async () => {
    await writeAndClose();
    unlinkSync(join(tmp.dir, CHECKPOINT_FILE));
    const last = files('.log').at(-1)!;
    const size = statSync(last).size;
    truncateSync(last, size + 100);
    const fd = openSync(last, 'r+');
    writeSync(fd, Buffer.from([7]), 0, 1, size + 60);
    closeSync(fd);
    const l = open();
    expect(l.recoveryInfo.truncatedBytes).toBe(100);
    everyOffsetReadable(l, 300);
  });

  it('a flipped byte in the last batch is caught by its CRC and the batch is cut', async () => {
    await writeAndClose();
    const last = files('.log').at(-1)!;
    const size = statSync(last).size;
    const fd = openSync(last, 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, size - 3);
    b[0] ^= 0xff;
    writeSync(fd, b, 0, 1, size - 3);
    closeSync(fd);
    // Pretend the crash happened before the last batch was checkpointed.
    const cp = JSON.parse(readFileSync(join(tmp.dir, CHECKPOINT_FILE), 'utf8'));
    cp.recoveryPoint.position = 0;
    cp.recoveryPoint.offset = cp.recoveryPoint.segment;
    writeFileSync(join(tmp.dir, CHECKPOINT_FILE), JSON.stringify(cp));
    const l = open();
    expect(l.recoveryInfo.truncatedBytes).toBeGreaterThan(0);
    expect(l.logEndOffset).toBe(297);
    everyOffsetReadable(l, 297);
  });

  it('leftover index files without a log and temp files are removed', async () => {
    await writeAndClose();
    writeFileSync(join(tmp.dir, `${'9'.padStart(20, '0')}.index`), Buffer.alloc(16));
    writeFileSync(join(tmp.dir, `${CHECKPOINT_FILE}.tmp`), 'half');
    open();
    expect(existsSync(join(tmp.dir, `${'9'.padStart(20, '0')}.index`))).toBe(false);
    expect(existsSync(join(tmp.dir, `${CHECKPOINT_FILE}.tmp`))).toBe(false);
  });
});
