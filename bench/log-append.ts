/**
 * Partition log append and read throughput, next to the limit measured in the same
 * run: writing the same bytes to a file with plain fs.writeSync.
 *
 * Workload: batches of 100-byte records (uncompressed, no keys, as `kcat -P` sends
 * them by default), written through PartitionLog.append (CRC check, offset
 * assignment, index maintenance, one write per append), then read back from offset
 * 0 with 1 MiB reads as Fetch does. Also: appends under flush.messages=1 (fsync
 * before acknowledging) with 16 appends in flight, to show group commit.
 *
 * Run: node --import tsx bench/log-append.ts [records] [recordsPerBatch]
 * Prints `name: value unit` lines.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PartitionLog } from '../src/broker/log/partition-log.ts';
import { effectiveTopicConfig } from '../src/broker/log/topic-config.ts';
import { batchRecordCount, batchSize, encodeBatch } from '../src/protocol/record-batch.ts';
import { systemClock } from '../src/util/clock.ts';

const totalRecords = Number(process.argv[2] ?? 2_000_000);
const perBatch = Number(process.argv[3] ?? 1000);
const RECORD_BYTES = 100;

function makeBatches(): Buffer[] {
  const value = Buffer.alloc(RECORD_BYTES, 'v');
  const template = encodeBatch({
    records: Array.from({ length: perBatch }, () => ({ timestamp: Date.now(), key: null, value })),
  });
  const count = Math.ceil(totalRecords / perBatch);
  return Array.from({ length: count }, () => Buffer.from(template));
}

function line(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'bench-log-'));
  try {
    const batches = makeBatches();
    const bytes = batches.reduce((s, b) => s + b.length, 0);
    const records = batches.length * perBatch;
    const mb = bytes / 1e6;

    // The limit: the same bytes, the same write sizes, straight to a file.
    const fd = openSync(join(root, 'plain.bin'), 'w');
    let t = process.hrtime.bigint();
    for (const b of batches) writeSync(fd, b);
    const plainSec = Number(process.hrtime.bigint() - t) / 1e9;
    closeSync(fd);

    const log = PartitionLog.open({
      dir: join(root, 'bench-0'),
      topic: 'bench',
      partition: 0,
      config: effectiveTopicConfig({ 'segment.bytes': 256 * 1024 * 1024 }, {}),
      clock: systemClock,
    });
    t = process.hrtime.bigint();
    for (const b of batches) await log.append(b);
    const appendSec = Number(process.hrtime.bigint() - t) / 1e9;

    t = process.hrtime.bigint();
    let offset = 0;
    let readRecords = 0;
    let readBytes = 0;
    while (offset < log.logEndOffset) {
      const { records: data } = log.read(offset, 1024 * 1024, true);
      let pos = 0;
      while (pos < data.length) {
        readRecords += batchRecordCount(data, pos);
        pos += batchSize(data, pos);
      }
      readBytes += data.length;
      offset = readRecords;
    }
    const readSec = Number(process.hrtime.bigint() - t) / 1e9;
    await log.close();

    // Durable appends: flush.messages=1, 16 in flight, fewer batches (fsync-bound).
    const durable = PartitionLog.open({
      dir: join(root, 'durable-0'),
      topic: 'durable',
      partition: 0,
      config: effectiveTopicConfig({ 'flush.messages': 1 }, {}),
      clock: systemClock,
    });
    const durableBatches = batches.slice(0, Math.min(batches.length, 400));
    t = process.hrtime.bigint();
    let next = 0;
    const worker = async () => {
      while (next < durableBatches.length) await durable.append(durableBatches[next++]);
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const durableSec = Number(process.hrtime.bigint() - t) / 1e9;
    await durable.close();

    console.log(
      `# ${records} records of ${RECORD_BYTES} bytes in batches of ${perBatch} (${mb.toFixed(1)} MB)`,
    );
    line('plain_fs_write_records_per_sec', records / plainSec, 'records/s');
    line('plain_fs_write_mb_per_sec', mb / plainSec, 'MB/s');
    line('log_append_records_per_sec', records / appendSec, 'records/s');
    line('log_append_mb_per_sec', mb / appendSec, 'MB/s');
    line('log_append_vs_plain_write', plainSec / appendSec, 'ratio');
    line('log_read_records_per_sec', readRecords / readSec, 'records/s');
    line('log_read_mb_per_sec', readBytes / 1e6 / readSec, 'MB/s');
    line(
      'log_append_fsync_each_records_per_sec',
      (durableBatches.length * perBatch) / durableSec,
      'records/s',
    );
    line('log_append_fsync_each_appends_per_sec', durableBatches.length / durableSec, 'appends/s');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
