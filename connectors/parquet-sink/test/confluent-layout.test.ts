/**
 * Confluent's layout and record handling through the writer, on a local folder: file
 * names and delimiters, resuming a bucket Confluent's connector (or an earlier version
 * of this sink) wrote, rotate.file.on.partition.change and report.null.values.to.dlq.
 */
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, type SinkRecord } from '../../../src/connect/api/index.ts';
import type { ParquetSinkConfig } from '../config.ts';
import { LocalStore } from '../local-store.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query } from './duckdb.ts';
import { orderRecords, sinkConfig, sinkRecord, T0 } from './fixtures.ts';

const TOPIC = 'orders';
const tp = { topic: TOPIC, partition: 0 };
let dir: string;
const writers: ParquetSinkWriter[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'confluent-layout-'));
});
afterEach(async () => {
  for (const w of writers.splice(0)) await w.stop();
  rmSync(dir, { recursive: true, force: true });
});

function sink(
  over: Partial<ParquetSinkConfig>,
  options: ConstructorParameters<typeof ParquetSinkWriter>[3] = {},
): ParquetSinkWriter {
  const store = new LocalStore(pathToFileURL(join(dir, 'lake')).href);
  const w = new ParquetSinkWriter(
    sinkConfig({ kind: 'local', url: '' }, over),
    store,
    new ManualClock(T0),
    { encoder: 'inline', ...options },
  );
  writers.push(w);
  return w;
}

const files = (sub: string) =>
  readdirSync(join(dir, 'lake', sub)).filter((f) => !f.startsWith('.'));

/** What Confluent's connector leaves: a Parquet file by another writer, under Confluent's name. */
async function confluentFile(path: string, from: number, count: number): Promise<void> {
  mkdirSync(join(dir, 'lake', path, '..'), { recursive: true });
  await query(
    `COPY (SELECT 1000 + i AS id FROM range(${from}, ${from + count}) t(i))
     TO '${join(dir, 'lake', path)}' (FORMAT parquet, COMPRESSION snappy)`,
  );
}

describe("Confluent's file layout", () => {
  it('names files <topic><file.delim><partition><file.delim><padded offset>.<codec>.parquet in directory.delim folders', async () => {
    const w = sink({ flushSize: 5, codec: 'gzip', padWidth: 4, fileDelim: '-', dirDelim: '/' });
    await w.open([tp]);

    await w.put(orderRecords(TOPIC, 0, 0, 10));
    await w.flushed();

    expect(files('topics/orders/partition=0')).toEqual([
      'orders-0-0000.gz.parquet',
      'orders-0-0005.gz.parquet',
    ]);
  });

  it("resumes a bucket Confluent's connector wrote, at the committed offset, without duplicating what is there", async () => {
    await confluentFile('topics/orders/partition=0/orders+0+0000000000.snappy.parquet', 0, 10);
    const w = sink({ flushSize: 10 });

    // No seek: the consumer's committed offset (Confluent's) stands.
    expect(await w.open([tp])).toEqual([]);
    // Even a consumer that starts over (a new connector name, a reset group) adds no
    // copy of what the newest file holds.
    await w.put(orderRecords(TOPIC, 0, 0, 20));
    await w.flushed();

    expect(files('topics/orders/partition=0')).toEqual([
      'orders+0+0000000000.snappy.parquet',
      'orders+0+0000000010.snappy.parquet',
    ]);
    const [counts] = await query(
      `SELECT count(*) AS n, count(DISTINCT id) AS ids FROM read_parquet('${dir}/lake/topics/orders/**/*.parquet', union_by_name = true)`,
    );
    expect(counts).toEqual({ n: 20n, ids: 20n });
  });

  it("replays an interrupted group of this sink's earlier versions under their .parquet names, then writes Confluent's", async () => {
    const field = {
      ...sinkConfig({ kind: 'local', url: '' }).partitioner,
      className: 'Field',
      fieldNames: ['customer'],
    };
    const first = sink({ flushSize: 14, partitioner: field });
    await first.open([tp]);
    await first.put(orderRecords(TOPIC, 0, 0, 14)); // one group: 7 customer folders
    await first.flushed();
    await first.stop();
    writers.splice(0);
    // The earlier version's names, and a crash that left one of the group's files out.
    const folders = readdirSync(join(dir, 'lake/topics/orders')).sort();
    for (const folder of folders) {
      const path = join(dir, 'lake/topics/orders', folder);
      for (const f of readdirSync(path))
        renameSync(join(path, f), join(path, f.replace('.snappy.parquet', '.parquet')));
    }
    rmSync(join(dir, 'lake/topics/orders', folders[0] as string), { recursive: true });

    const second = sink({ flushSize: 14, partitioner: field });
    expect(await second.open([tp])).toEqual([{ ...tp, offset: 0 }]);
    await second.put(orderRecords(TOPIC, 0, 0, 28));
    await second.flushed();

    const all = folders.flatMap((f) => files(`topics/orders/${f}`)).sort();
    expect(all.filter((f) => f.endsWith('.snappy.parquet'))).toHaveLength(7); // the next group
    expect(all.filter((f) => !f.endsWith('.snappy.parquet'))).toHaveLength(7); // replayed as they were
    const [counts] = await query(
      `SELECT count(*) AS n, count(DISTINCT id) AS ids FROM read_parquet('${dir}/lake/topics/orders/**/*.parquet')`,
    );
    expect(counts).toEqual({ n: 28n, ids: 28n });
  });
});

describe("Confluent's record handling", () => {
  const hourly = { ...sinkConfig({ kind: 'local', url: '' }).partitioner, className: 'Hourly' };

  it('rotate.file.on.partition.change closes the files when a record goes to another folder', async () => {
    const day = 86_400_000;
    const rotating = sink({ flushSize: 1000, rotateIntervalMs: day, partitioner: hourly });
    await rotating.open([tp]);
    // One record a minute from 22:30: hours 22, 23 and 00.
    await rotating.put(orderRecords(TOPIC, 0, 0, 100));
    await rotating.flushed();

    const keeping = sink({
      flushSize: 1000,
      rotateIntervalMs: day,
      partitioner: hourly,
      rotateOnPartitionChange: false,
    });
    await keeping.open([{ topic: 'other', partition: 0 }]);
    await keeping.put(orderRecords('other', 0, 0, 100));
    await keeping.flushed();

    expect(rotating.writer(tp)?.written.map((k) => k.slice(k.indexOf('hour')))).toEqual([
      'hour=22/orders+0+0000000000.snappy.parquet',
      'hour=23/orders+0+0000000030.snappy.parquet',
    ]);
    expect(keeping.writer({ topic: 'other', partition: 0 })?.written).toEqual([]);
  });

  it('report.null.values.to.dlq sends each null skipped under behavior.on.null.values=ignore to the DLQ', async () => {
    const reported: number[] = [];
    const report = async (r: SinkRecord) => {
      reported.push(r.kafkaOffset);
    };
    const records = [
      ...orderRecords(TOPIC, 0, 0, 2),
      sinkRecord(TOPIC, 0, 2, null),
      ...orderRecords(TOPIC, 0, 3, 1),
      sinkRecord(TOPIC, 0, 4, null),
    ];
    const reporting = sink({ nullBehavior: 'ignore' }, { reportErrant: report });
    await reporting.open([tp]);
    await reporting.put(records);
    await reporting.put(records); // redelivered: reported once only

    const quiet = sink(
      { nullBehavior: 'ignore', reportNullsToDlq: false },
      { reportErrant: report },
    );
    await quiet.open([{ topic: 'q', partition: 0 }]);
    await quiet.put(records.map((r) => ({ ...r, topic: 'q' })));

    expect(reported).toEqual([2, 4]);
  });
});
