/**
 * Rotation through the real runtime: by size (flush.size), by record time
 * (rotate.interval.ms, HourlyPartitioner) and by schedule (rotate.schedule.interval.ms,
 * which must also close a partition that receives nothing more). The sink's consumer
 * group commits exactly the offsets whose records are in finished files.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { query } from '../../../connectors/parquet-sink/test/duckdb.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { listFiles, produce, startPipeline, waitForCommitted } from './sink-pipeline.ts';
import { cdcMessage, clickMessage, range } from './wire-records.ts';

const SINK = 'io.confluent.connect.s3.S3SinkConnector';
const ORDERS = 'shop.public.orders';

function parquetFiles(root: string): string[] {
  return listFiles(root).filter((f) => f.endsWith('.parquet'));
}

describe('Parquet sink rotation through connect standalone', () => {
  it('closes a file every flush.size records and keeps the rest open, uncommitted', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({
      dir,
      connector: {
        name: 'by-size',
        config: {
          'connector.class': SINK,
          topics: 'clicks',
          'store.url': `file://${lake}`,
          'flush.size': '100',
        },
      },
    });
    await produce(
      p.bootstrap,
      'clicks',
      range(0, 250).map((i) => clickMessage(i)),
    );
    await waitForCommitted(p, 'by-size', 'clicks', [200]);
    expect(parquetFiles(lake)).toEqual([
      'topics/clicks/partition=0/clicks+0+0000000000.snappy.parquet',
      'topics/clicks/partition=0/clicks+0+0000000100.snappy.parquet',
    ]);
    const sizes = await query(
      `SELECT count(*) AS n, min(n) AS first FROM read_parquet('${lake}/topics/**/*.parquet', filename = true) GROUP BY filename ORDER BY first`,
    );
    expect(sizes).toEqual([
      { n: 100n, first: 0 },
      { n: 100n, first: 100 },
    ]);
  });

  it('closes a file when a record is rotate.interval.ms past the first of its file (record time)', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({
      dir,
      connector: {
        name: 'by-record-time',
        config: {
          'connector.class': SINK,
          topics: ORDERS,
          'store.url': `file://${lake}`,
          'flush.size': '100000',
          'rotate.interval.ms': String(10 * 60_000),
          'partitioner.class': 'io.confluent.connect.storage.partitioner.HourlyPartitioner',
          locale: 'en-US',
          timezone: 'UTC',
          'timestamp.extractor': 'Record',
          transforms: 'unwrap',
          'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
        },
      },
    });
    // One record a minute from 22:30: ten minutes per file; the last five stay open.
    await produce(
      p.bootstrap,
      ORDERS,
      range(0, 95).map((i) => cdcMessage(i)),
    );
    await waitForCommitted(p, 'by-record-time', ORDERS, [90]);
    const hourOf = (i: number) => (i < 30 ? '28/hour=22' : i < 90 ? '28/hour=23' : '29/hour=00');
    expect(parquetFiles(lake)).toEqual(
      range(0, 9).map(
        (g) =>
          `topics/${ORDERS}/year=2026/month=11/day=${hourOf(g * 10)}/${ORDERS}+0+${String(g * 10).padStart(10, '0')}.snappy.parquet`,
      ),
    );
    // Deletes are dropped by ExtractNewRecordState's default (tombstone) mode.
    const [agg] = await query(
      `SELECT count(*) AS n FROM read_parquet('${lake}/topics/**/*.parquet')`,
    );
    expect(agg).toEqual({ n: 81n });
  });

  it('closes files on the wall-clock schedule, also for a partition that went idle', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({
      dir,
      connector: {
        name: 'by-schedule',
        config: {
          'connector.class': SINK,
          topics: 'clicks',
          'store.url': `file://${lake}`,
          'flush.size': '100000',
          'rotate.schedule.interval.ms': '1000',
        },
      },
    });
    await produce(
      p.bootstrap,
      'clicks',
      range(0, 50).map((i) => clickMessage(i)),
    );
    // Nothing more arrives: only the schedule can close the file.
    await waitForCommitted(p, 'by-schedule', 'clicks', [50]);
    await produce(
      p.bootstrap,
      'clicks',
      range(50, 80).map((i) => clickMessage(i)),
    );
    await waitForCommitted(p, 'by-schedule', 'clicks', [80]);
    const files = await query(
      `SELECT min(n) AS first, max(n) AS last, count(*) AS n
       FROM read_parquet('${lake}/topics/**/*.parquet', filename = true) GROUP BY filename ORDER BY first`,
    );
    // Where the clock cut is timing; that every record is in exactly one file, in
    // order, and the second batch in files of its own is not.
    expect(files.length).toBeGreaterThanOrEqual(2);
    let next = 0;
    for (const f of files) {
      expect(f.first).toBe(next);
      expect(BigInt((f.last as number) - (f.first as number) + 1)).toBe(f.n);
      next = (f.last as number) + 1;
    }
    expect(next).toBe(80);
    expect(files.some((f) => f.last === 49)).toBe(true);
  });
});
