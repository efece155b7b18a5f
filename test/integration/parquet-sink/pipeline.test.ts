/**
 * Records produced to a topic reach Parquet files through the real runtime (`connect
 * standalone`, embedded broker, JsonConverter with schemas), in a local folder and in
 * S3 (s3rver), and DuckDB reads back what was sent: counts, sums, column types and the
 * Hive partition columns of every partitioner.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, scan } from '../../../connectors/parquet-sink/test/duckdb.ts';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  materialize,
  produce,
  s3Objects,
  startPipeline,
  waitForCommitted,
} from './sink-pipeline.ts';
import {
  amountCents,
  COUNTRIES,
  cdcMessage,
  clickMessage,
  isDelete,
  range,
} from './wire-records.ts';

const BUCKET = 'lake';
const ORDERS = 'shop.public.orders';
const SINK = 'io.confluent.connect.s3.S3SinkConnector';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3({ buckets: [BUCKET] });
});
afterAll(async () => {
  await s3?.stop();
});

function s3Store() {
  return {
    'store.url': s3.endpoint,
    's3.bucket.name': BUCKET,
    's3.region': s3.region,
    'aws.access.key.id': s3.credentials.accessKeyId,
    'aws.secret.access.key': s3.credentials.secretAccessKey,
  };
}

const unwrap = {
  transforms: 'unwrap',
  'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
  'transforms.unwrap.delete.handling.mode': 'rewrite',
  'transforms.unwrap.add.fields': 'op,ts_ms',
};

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const money = (cents: number) => (cents / 100).toFixed(2);

describe('Parquet sink through connect standalone', () => {
  it('writes Debezium envelopes to a local folder, one folder per Kafka partition', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({
      dir,
      partitions: 2,
      connector: {
        name: 'envelopes',
        config: {
          'connector.class': SINK,
          topics: ORDERS,
          'store.url': `file://${lake}`,
          'flush.size': '50',
          'partitioner.class': 'io.confluent.connect.storage.partitioner.DefaultPartitioner',
          'parquet.codec': 'zstd',
        },
      },
    });
    const ids = range(0, 400);
    await produce(
      p.bootstrap,
      ORDERS,
      ids.map((i) => cdcMessage(i, 2)),
      2,
    );
    await waitForCommitted(p, 'envelopes', ORDERS, [200, 200]);

    const rows = scan(join(lake, 'topics', ORDERS));
    const [agg] = await query(`
      SELECT count(*) AS n,
             count(*) FILTER (WHERE op = 'd') AS deletes,
             sum(after.id) AS after_ids,
             sum(before.id) AS before_ids,
             sum(after.amount)::VARCHAR AS after_amount,
             min(after.updated_at)::VARCHAR AS first_update,
             count(DISTINCT source.lsn) AS lsns,
             list(DISTINCT partition ORDER BY partition) AS partitions
      FROM ${rows}`);
    const creates = ids.filter((i) => !isDelete(i));
    const deletes = ids.filter(isDelete);
    expect(agg).toEqual({
      n: 400n,
      deletes: BigInt(deletes.length),
      after_ids: BigInt(sum(creates.map((i) => 1000 + i))),
      before_ids: BigInt(sum(deletes.map((i) => 1000 + i))),
      after_amount: money(sum(creates.map(amountCents))),
      first_update: '2026-11-28 22:30:00',
      lsns: 400n,
      partitions: [0n, 1n],
    });
    const types = await query(
      `SELECT typeof(after.amount) AS amount, typeof(after.created_on) AS created_on,
              typeof(after.updated_at) AS updated_at, typeof(ts_ms) AS ts_ms
       FROM ${rows} LIMIT 1`,
    );
    expect(types).toEqual([
      { amount: 'DECIMAL(10,2)', created_on: 'DATE', updated_at: 'TIMESTAMP', ts_ms: 'BIGINT' },
    ]);
    const [files] = await query(
      `SELECT count(DISTINCT filename) AS n FROM read_parquet('${lake}/topics/**/*.parquet', filename = true)`,
    );
    expect(files).toEqual({ n: 8n });
  });

  it('writes flat CDC rows (ExtractNewRecordState) to S3 in hourly folders by record time', async () => {
    const dir = useTmpDir();
    const p = await startPipeline({
      dir,
      connector: {
        name: 'flat-s3',
        config: {
          'connector.class': SINK,
          topics: ORDERS,
          ...s3Store(),
          'topics.dir': 'flat',
          'flush.size': '100',
          'partitioner.class': 'io.confluent.connect.storage.partitioner.TimeBasedPartitioner',
          'path.format': "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
          'partition.duration.ms': '3600000',
          locale: 'en-US',
          timezone: 'UTC',
          'timestamp.extractor': 'Record',
          ...unwrap,
        },
      },
    });
    const ids = range(0, 300);
    await produce(
      p.bootstrap,
      ORDERS,
      ids.map((i) => cdcMessage(i)),
    );
    await waitForCommitted(p, 'flat-s3', ORDERS, [300]);

    const local = materialize(await s3Objects(s3.client, BUCKET), join(dir, 'copy'));
    const rows = scan(join(local, 'flat', ORDERS));
    const [agg] = await query(`
      SELECT count(*) AS n, sum(id) AS ids, sum(amount)::VARCHAR AS amount,
             count(*) FILTER (WHERE __deleted) AS deleted,
             count(*) FILTER (WHERE __op = 'd') AS op_d,
             count(*) FILTER (WHERE status IS NULL) AS null_status
      FROM ${rows}`);
    expect(agg).toEqual({
      n: 300n,
      ids: BigInt(sum(ids.map((i) => 1000 + i))),
      amount: money(sum(ids.map(amountCents))),
      deleted: 30n,
      op_d: 30n,
      null_status: BigInt(ids.filter((i) => i % 5 === 0).length),
    });
    // Record time T0 + i minutes from 2026-11-28 22:30 UTC: 30 rows in hour 22, then 60 an hour.
    const hours = await query(
      `SELECT year, month, day, hour::INT AS hour, count(*) AS n FROM ${rows} GROUP BY ALL ORDER BY ALL`,
    );
    expect(hours).toEqual([
      { year: 2026n, month: 11n, day: 28n, hour: 22, n: 30n },
      { year: 2026n, month: 11n, day: 28n, hour: 23, n: 60n },
      { year: 2026n, month: 11n, day: 29n, hour: 0, n: 60n },
      { year: 2026n, month: 11n, day: 29n, hour: 1, n: 60n },
      { year: 2026n, month: 11n, day: 29n, hour: 2, n: 60n },
      { year: 2026n, month: 11n, day: 29n, hour: 3, n: 30n },
    ]);
    const [types] = await query(
      `SELECT typeof(amount) AS amount, typeof(created_on) AS created_on,
              typeof(updated_at) AS updated_at, typeof(__ts_ms) AS ts_ms, typeof(__deleted) AS deleted
       FROM ${rows} LIMIT 1`,
    );
    expect(types).toEqual({
      amount: 'DECIMAL(10,2)',
      created_on: 'DATE',
      updated_at: 'TIMESTAMP',
      ts_ms: 'BIGINT',
      deleted: 'BOOLEAN',
    });
  });

  it('writes plain JSON rows to S3 in a folder per field value (FieldPartitioner)', async () => {
    const dir = useTmpDir();
    const p = await startPipeline({
      dir,
      partitions: 3,
      connector: {
        name: 'clicks-by-country',
        config: {
          'connector.class': SINK,
          topics: 'clicks',
          ...s3Store(),
          'topics.dir': 'by-country',
          'flush.size': '150',
          'partitioner.class': 'io.confluent.connect.storage.partitioner.FieldPartitioner',
          'partition.field.name': 'country',
          'parquet.codec': 'gzip',
        },
      },
    });
    const ids = range(0, 900);
    await produce(
      p.bootstrap,
      'clicks',
      ids.map((i) => clickMessage(i, 3)),
      3,
    );
    await waitForCommitted(p, 'clicks-by-country', 'clicks', [300, 300, 300]);

    const objects = await s3Objects(s3.client, BUCKET);
    const keys = [...objects.keys()].filter((k) => k.startsWith('by-country/'));
    // Each Kafka partition holds one country (i % 3), two groups of 150 each.
    expect(keys.sort()).toEqual([
      'by-country/clicks/country=de/clicks+0+0000000000.gz.parquet',
      'by-country/clicks/country=de/clicks+0+0000000150.gz.parquet',
      'by-country/clicks/country=fr/clicks+1+0000000000.gz.parquet',
      'by-country/clicks/country=fr/clicks+1+0000000150.gz.parquet',
      'by-country/clicks/country=us/clicks+2+0000000000.gz.parquet',
      'by-country/clicks/country=us/clicks+2+0000000150.gz.parquet',
    ]);
    const local = materialize(objects, join(dir, 'copy'));
    const byCountry = await query(
      `SELECT country, count(*) AS n, sum(n) AS total, sum(score) AS score,
              count(*) FILTER (WHERE ok) AS ok, min("at")::VARCHAR AS first
       FROM ${scan(join(local, 'by-country', 'clicks'))} GROUP BY country ORDER BY country`,
    );
    expect(byCountry).toEqual(
      COUNTRIES.map((country, c) => {
        const mine = ids.filter((i) => i % 3 === c);
        return {
          country,
          n: 300n,
          total: BigInt(sum(mine)),
          score: sum(mine) / 4,
          ok: BigInt(mine.filter((i) => i % 2 === 0).length),
          first: `2026-11-28 22:30:0${c}`,
        };
      }),
    );
  });

  it('writes flat CDC rows to a local folder in daily folders (DailyPartitioner)', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({
      dir,
      connector: {
        name: 'flat-daily',
        config: {
          'connector.class': SINK,
          topics: ORDERS,
          'store.url': `file://${lake}`,
          'flush.size': '120',
          'partitioner.class': 'io.confluent.connect.storage.partitioner.DailyPartitioner',
          locale: 'en-US',
          timezone: 'UTC',
          'timestamp.extractor': 'Record',
          ...unwrap,
        },
      },
    });
    await produce(
      p.bootstrap,
      ORDERS,
      range(0, 240).map((i) => cdcMessage(i)),
    );
    await waitForCommitted(p, 'flat-daily', ORDERS, [240]);
    const days = await query(
      `SELECT year, month, day, count(*) AS n, count(DISTINCT filename) AS files
       FROM read_parquet('${lake}/topics/${ORDERS}/**/*.parquet', hive_partitioning = true, filename = true)
       GROUP BY ALL ORDER BY ALL`,
    );
    // 90 minutes left of the 28th (i < 90); each group of 120 spans midnight or not.
    expect(days).toEqual([
      { year: 2026n, month: 11n, day: 28n, n: 90n, files: 1n },
      { year: 2026n, month: 11n, day: 29n, n: 150n, files: 2n },
    ]);
  });
});
