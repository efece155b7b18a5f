/**
 * Through the real runtime: records with a null value (tombstones) per
 * behavior.on.null.values, and a store the task cannot use (missing bucket, unknown
 * access key), which must show as a FAILED task in GET /connectors/{name}/status
 * carrying S3's own error message.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../connectors/parquet-sink/test/duckdb.ts';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';
import {
  connectorStatus,
  localObjects,
  type Pipeline,
  produce,
  startPipeline,
  waitForCommitted,
} from './sink-pipeline.ts';
import { clickMessage, range } from './wire-records.ts';

const SINK = 'io.confluent.connect.s3.S3SinkConnector';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3({ buckets: ['lake'] });
});
afterAll(async () => {
  await s3?.stop();
});

/** 200 click rows where every fourth value (offsets 3, 7, ...) is null. */
const withTombstones = range(0, 200).map((i) =>
  i % 4 === 3 ? { key: { id: i }, value: null } : { ...clickMessage(i), key: { id: i } },
);

function localSink(lake: string, nulls: string, flushSize = 100) {
  return {
    name: `nulls-${nulls}`,
    config: {
      'connector.class': SINK,
      topics: 'clicks',
      'store.url': `file://${lake}`,
      'flush.size': String(flushSize),
      'behavior.on.null.values': nulls,
      // Without schemas for keys, so the key column is a plain JSON object.
      'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'key.converter.schemas.enable': 'false',
    },
  };
}

async function failedTask(p: Pipeline, name: string): Promise<string> {
  return waitFor(`task of ${name} FAILED`, async () => {
    const status = await connectorStatus(p.restUrl, name);
    const task = status.tasks[0];
    return task?.state === 'FAILED' ? (task.trace ?? '') : undefined;
  });
}

describe('Parquet sink null values through connect standalone', () => {
  it('ignore: skips null values, writes the other rows and commits past the nulls', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({ dir, connector: localSink(lake, 'ignore', 75) });
    await produce(p.bootstrap, 'clicks', withTombstones);
    await waitForCommitted(p, 'nulls-ignore', 'clicks', [200]);
    const [agg] = await query(
      `SELECT count(*) AS n, sum(n) AS total FROM read_parquet('${lake}/topics/**/*.parquet')`,
    );
    const kept = range(0, 200).filter((i) => i % 4 !== 3);
    expect(agg).toEqual({ n: BigInt(kept.length), total: BigInt(kept.reduce((a, b) => a + b)) });
    // flush.size counts written rows: 150 rows make two files of 75; the last record,
    // a null, is ignored and the committed offset passes it.
    expect([...localObjects(lake).keys()]).toEqual([
      'topics/clicks/partition=0/clicks+0+0000000000.snappy.parquet',
      'topics/clicks/partition=0/clicks+0+0000000100.snappy.parquet',
    ]);
  });

  it("write: keeps a null value's key in the tombstone folder's keys files, as Confluent's sink does", async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({
      dir,
      connector: {
        ...localSink(lake, 'write'),
        config: {
          ...localSink(lake, 'write').config,
          'store.kafka.keys': 'true',
          'keys.format.class': 'io.confluent.connect.s3.format.parquet.ParquetFormat',
        },
      },
    });
    await produce(p.bootstrap, 'clicks', withTombstones);
    await waitForCommitted(p, 'nulls-write', 'clicks', [200]);
    const [agg] = await query(
      `SELECT count(*) AS n, sum(n) AS total
       FROM read_parquet('${lake}/topics/clicks/partition=*/*[0-9].snappy.parquet')`,
    );
    const kept = range(0, 200).filter((i) => i % 4 !== 3);
    expect(agg).toEqual({ n: 150n, total: BigInt(kept.reduce((a, b) => a + b)) });
    // The tombstones' keys, in the folder tombstone.encoded.partition names (default
    // `tombstone`), which holds keys files only: no value file for a null value.
    const folder = `${lake}/topics/clicks/tombstone`;
    expect(readdirSync(folder).every((f) => f.includes('.keys.'))).toBe(true);
    const tombstoneKeys = await query(
      `SELECT key.id AS id FROM read_parquet('${folder}/*.keys.snappy.parquet') ORDER BY id`,
    );
    expect(tombstoneKeys.map((r) => Number(r.id))).toEqual(
      range(0, 200).filter((i) => i % 4 === 3),
    );
  });

  it('fail: puts the task in FAILED, naming the record and the setting', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const p = await startPipeline({ dir, connector: localSink(lake, 'fail') });
    await produce(p.bootstrap, 'clicks', withTombstones);
    const trace = await failedTask(p, 'nulls-fail');
    expect(trace).toContain('record clicks-0@3 has a null value');
    expect(trace).toContain('behavior.on.null.values=fail');
    expect(localObjects(lake).size).toBe(0);
  });
});

describe('Parquet sink on an S3 store it cannot use', () => {
  const s3Sink = (name: string, over: Record<string, string>) => ({
    name,
    config: {
      'connector.class': SINK,
      topics: 'clicks',
      'store.url': s3.endpoint,
      's3.bucket.name': 'lake',
      's3.region': s3.region,
      'aws.access.key.id': s3.credentials.accessKeyId,
      'aws.secret.access.key': s3.credentials.secretAccessKey,
      's3.part.retries': '0',
      'flush.size': '10',
      ...over,
    },
  });

  it('a missing bucket fails the task with S3 NoSuchBucket', async () => {
    const dir = useTmpDir();
    const p = await startPipeline({
      dir,
      connector: s3Sink('no-bucket', { 's3.bucket.name': 'no-such-lake' }),
    });
    const trace = await failedTask(p, 'no-bucket');
    expect(trace).toContain('s3://no-such-lake');
    expect(trace).toContain('NoSuchBucket');
    expect(trace).toContain('The specified bucket does not exist');
  });

  it('an unknown access key fails the task with S3 InvalidAccessKeyId', async () => {
    const dir = useTmpDir();
    const p = await startPipeline({
      dir,
      connector: s3Sink('bad-key', { 'aws.access.key.id': 'NOT-A-KEY' }),
    });
    const trace = await failedTask(p, 'bad-key');
    expect(trace).toContain('InvalidAccessKeyId');
    expect(trace).toContain('does not exist in our records');
  });
});
