import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  loadManifests,
  parseConfig,
  pluginNames,
  type TopicPartition,
  type TopicPartitionOffset,
} from '../../../src/connect/api/index.ts';
import { startS3, type TestS3 } from '../../../test/helpers/s3.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { parquetSinkConfigDefs, toSinkConfig, validateSinkConfig } from '../config.ts';
import * as entry from '../index.ts';
import { ParquetSinkTask } from '../parquet-sink-task.ts';
import { query, scan } from './duckdb.ts';
import { orderRecords, taskContext } from './fixtures.ts';

const ORDERS = 'shop.public.orders';
const partitions: TopicPartition[] = [{ topic: ORDERS, partition: 0 }];

let dir: string;
let s3: TestS3;
const tasks: ParquetSinkTask[] = [];
beforeAll(async () => {
  s3 = await startS3({ buckets: ['lake'] });
});
afterAll(async () => {
  await s3?.stop();
});
afterEach(async () => {
  for (const t of tasks.splice(0)) await t.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function task(): ParquetSinkTask {
  const t = new ParquetSinkTask();
  tasks.push(t);
  return t;
}

describe('ParquetSinkTask', () => {
  it('commits only durable offsets and, restarted, seeks to where the files end', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sink-task-'));
    const config = {
      'store.url': pathToFileURL(dir).href,
      'flush.size': '100',
      'partitioner.class': 'io.confluent.connect.storage.partitioner.DefaultPartitioner',
      'format.class': 'io.confluent.connect.s3.format.parquet.ParquetFormat',
      'parquet.codec': 'zstd',
    };
    const first = task();
    const ctx = taskContext(partitions);
    await first.start(config, ctx);
    await first.open(partitions);
    expect(ctx.seeks).toEqual([]);
    await first.put(orderRecords(ORDERS, 0, 0, 150));
    // The first file uploads in the background: preCommit offers nothing of it before
    // it is durable, never the 50 records still buffered. That must hold at every
    // poll, so each answer is kept and checked after the wait: an expect inside
    // waitFor's check would be retried, and a poll that offered 150 once would pass.
    const answers: TopicPartitionOffset[][] = [];
    const offered = await waitFor('the first file to be durable', async () => {
      const o = await first.preCommit([{ topic: ORDERS, partition: 0, offset: 150 }]);
      answers.push(o);
      return o.length > 0 ? o : undefined;
    });
    expect(answers.flat().filter((x) => x.offset > 100)).toEqual([]);
    expect(offered).toEqual([{ topic: ORDERS, partition: 0, offset: 100 }]);
    await first.stop();

    const second = task();
    const ctx2 = taskContext(partitions);
    await second.start(config, ctx2);
    await second.open(partitions);
    expect(ctx2.seeks).toEqual([{ topic: ORDERS, partition: 0, offset: 100 }]);
    const [agg] = await query(`SELECT count(*) AS n FROM ${scan(join(dir, 'topics'))}`);
    expect(agg).toEqual({ n: 100n });
  });

  it('fails to start with S3 error text when the bucket is missing or the access key is unknown', async () => {
    const base = {
      'store.url': s3.endpoint,
      's3.region': s3.region,
      'flush.size': '10',
      'aws.access.key.id': s3.credentials.accessKeyId,
      'aws.secret.access.key': s3.credentials.secretAccessKey,
      's3.part.retries': '0',
    };
    await expect(
      task().start({ ...base, 's3.bucket.name': 'missing' }, taskContext(partitions)),
    ).rejects.toThrow(
      /Parquet sink cannot use s3:\/\/missing at http:\/\/127\.0\.0\.1:\d+.*NoSuchBucket/,
    );
    await expect(
      task().start(
        { ...base, 's3.bucket.name': 'lake', 'aws.access.key.id': 'NOBODY' },
        taskContext(partitions),
      ),
    ).rejects.toThrow(/cannot list s3:\/\/lake: InvalidAccessKeyId: .*\(HTTP 403\)/);
    const ok = task();
    await ok.start({ ...base, 's3.bucket.name': 'lake' }, taskContext(partitions));
  });

  it('refuses configs that name no destination or a partitioner without its keys', async () => {
    await expect(task().start({ 'flush.size': '1' }, taskContext(partitions))).rejects.toThrow(
      /s3.bucket.name: set s3.bucket.name, or store.url=file:\/\/\/path/,
    );
    const parsed = parseConfig(parquetSinkConfigDefs, {
      'flush.size': '5',
      's3.bucket.name': 'b',
      'partitioner.class': 'io.confluent.connect.storage.partitioner.TimeBasedPartitioner',
      'timestamp.extractor': 'Ingest',
    });
    expect(parsed.errors).toEqual([]);
    expect(validateSinkConfig(parsed.values).map((e) => e.key)).toEqual([
      'path.format',
      'partition.duration.ms',
      'timestamp.extractor',
    ]);
    const missing = parseConfig(parquetSinkConfigDefs, { 's3.bucket.name': 'b' });
    expect(missing.errors.map((e) => e.key)).toEqual(['flush.size']);
  });

  it('reads Confluent S3 sink configs into typed settings', () => {
    const parsed = parseConfig(parquetSinkConfigDefs, {
      's3.bucket.name': 'lake',
      's3.region': 'eu-west-1',
      'flush.size': '1000',
      'rotate.schedule.interval.ms': '600000',
      'partitioner.class': 'io.confluent.connect.storage.partitioner.FieldPartitioner',
      'partition.field.name': 'country, city',
      'behavior.on.null.values': 'ignore',
    });
    const c = toSinkConfig(parsed.values);
    expect(c.store).toMatchObject({
      kind: 's3',
      bucket: 'lake',
      region: 'eu-west-1',
      endpoint: '',
    });
    expect(c.partitioner.fieldNames).toEqual(['country', 'city']);
    expect(c).toMatchObject({
      flushSize: 1000,
      rotateScheduleIntervalMs: 600000,
      nullBehavior: 'ignore',
      padWidth: 10,
    });
  });

  it('exports a manifest that answers to Confluent’s S3 sink class name', () => {
    const [manifest] = loadManifests(entry, 'connectors/parquet-sink');
    expect(manifest && pluginNames(manifest)).toContain('io.confluent.connect.s3.S3SinkConnector');
  });
});
