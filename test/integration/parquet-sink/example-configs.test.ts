/**
 * The example connector files config/connectors/parquet-sink-local.json and
 * parquet-sink-s3.json run as given through `connect standalone`: only where the
 * files go changes (a temporary folder for file:///tmp/lake, s3rver and its keys for
 * the MinIO endpoint), every other key is the file's own (Confluent class names,
 * topics.regex, TimeBased/Default partitioner, ExtractNewRecordState with rewrite,
 * two tasks for the S3 one).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import { cdcMessage, range, T0 } from './wire-records.ts';

const ORDERS = 'shop.public.orders';
const CUSTOMERS = 'shop.public.customers';

function example(file: string): { name: string; config: Record<string, string> } {
  return JSON.parse(
    readFileSync(
      fileURLToPath(new URL(`../../../config/connectors/${file}`, import.meta.url)),
      'utf8',
    ),
  );
}

/** Change events one second apart (the examples rotate every minute of record time). */
const events = () => range(0, 300).map((i) => ({ ...cdcMessage(i), timestamp: T0 + i * 1000 }));

/**
 * The examples' topics do not exist when the worker starts (the first producer creates
 * them), as with a CDC source that captures a new table. The sink's consumer matches
 * topics.regex again at each metadata check, as Kafka's does, and joins the new
 * topics; the worker's metadata.max.age.ms (5 minutes by default) is a second here.
 */
const worker = { 'metadata.max.age.ms': '1000' };

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3({ buckets: ['lake'] });
});
afterAll(async () => {
  await s3?.stop();
});

describe('example Parquet sink connector files', () => {
  it('parquet-sink-local.json writes daily folders of flat rows', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const given = example('parquet-sink-local.json');
    expect(given.config['store.url']).toBe('file:///tmp/lake');
    const connector = { ...given, config: { ...given.config, 'store.url': `file://${lake}` } };
    const p = await startPipeline({ dir, connector, worker, env: { LOG_LEVEL: 'info' } });
    await produce(p.bootstrap, ORDERS, events());
    // Groups close a minute of record time apart, and the last one, left open by
    // record time, on the example's 10 s wall-clock schedule: a newcomer sees every
    // row in the lake within seconds.
    await waitForCommitted(p, given.name, ORDERS, [300]);
    const rows = scan(join(lake, 'topics', ORDERS));
    const [agg] = await query(
      `SELECT count(*) AS n, count(*) FILTER (WHERE __deleted) AS deleted,
              list(DISTINCT year || '-' || month || '-' || day) AS days
       FROM ${rows}`,
    );
    expect(agg).toEqual({ n: 300n, deleted: 30n, days: ['2026-11-28'] });
    // Every committed file is logged at INFO with its path, rows and bytes.
    const committed = p.process
      .output()
      .filter((l) => l.includes('"logger":"connectors.parquet-sink"') && l.includes('committed '));
    const logged = committed.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.reduce((n, l) => n + (l.rows as number), 0)).toBe(300);
    for (const l of logged) {
      expect(l).toMatchObject({
        level: 30,
        topic: ORDERS,
        bytes: expect.any(Number),
        file: expect.stringMatching(
          /^topics\/shop\.public\.orders\/year=2026\/month=11\/day=28\/shop\.public\.orders\+0\+\d{10}\.snappy\.parquet$/,
        ),
      });
    }
  });

  it('parquet-sink-s3.json writes to the bucket with two tasks over the matching topics', async () => {
    const dir = useTmpDir();
    const given = example('parquet-sink-s3.json');
    expect(given.config['store.url']).toBe('http://127.0.0.1:9000');
    const connector = {
      ...given,
      config: {
        ...given.config,
        'store.url': s3.endpoint,
        'aws.access.key.id': s3.credentials.accessKeyId,
        'aws.secret.access.key': s3.credentials.secretAccessKey,
      },
    };
    const p = await startPipeline({ dir, connector, worker });
    await produce(p.bootstrap, ORDERS, events());
    await produce(p.bootstrap, CUSTOMERS, events());
    await waitForCommitted(p, given.name, ORDERS, [240]);
    await waitForCommitted(p, given.name, CUSTOMERS, [240]);
    const local = materialize(await s3Objects(s3.client, 'lake'), join(dir, 'copy'));
    const counts = await query(
      `SELECT split_part(filename, '/', -3) AS topic, partition, count(*) AS n
       FROM read_parquet('${local}/topics/**/*.parquet', hive_partitioning = true, filename = true)
       GROUP BY ALL ORDER BY ALL`,
    );
    expect(counts).toEqual([
      { topic: CUSTOMERS, partition: 0n, n: 240n },
      { topic: ORDERS, partition: 0n, n: 240n },
    ]);
  });
});
