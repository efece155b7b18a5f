/**
 * Exactly-once files from at-least-once delivery, through the real runtime: the worker
 * process (`connect standalone`, embedded broker included) is killed with SIGKILL in
 * the middle of the stream, then started again on the same folders; the objects it
 * ends with are byte for byte those of a run without a crash over the same records.
 * Once in a local folder while files are being written, once in S3 while a multipart
 * upload is in flight (an interceptor in front of s3rver kills the worker when the
 * first UploadPart arrives and never answers it).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3, type TestS3 } from '../../helpers/s3.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';
import { isUploadPart, useS3Interceptor } from './s3-interceptor.ts';
import {
  listFiles,
  localObjects,
  produce,
  s3Objects,
  startPipeline,
  waitForCommitted,
} from './sink-pipeline.ts';
import { blobMessage, cdcMessage, range } from './wire-records.ts';

const SINK = 'io.confluent.connect.s3.S3SinkConnector';
const ORDERS = 'shop.public.orders';
const MiB = 1024 * 1024;

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3({ buckets: ['reference', 'crashed'] });
});
afterAll(async () => {
  await s3?.stop();
});

/**
 * Hourly folders by record time, two Kafka partitions: groups span several files, each
 * value file with its keys file beside it (store.kafka.keys), so a kill may fall
 * between a keys file and its value file.
 */
function ordersConnector(lake: string) {
  return {
    name: 'orders-lake',
    config: {
      'connector.class': SINK,
      topics: ORDERS,
      'store.url': `file://${lake}`,
      'flush.size': '50',
      'partitioner.class': 'io.confluent.connect.storage.partitioner.HourlyPartitioner',
      locale: 'en-US',
      timezone: 'UTC',
      'timestamp.extractor': 'Record',
      'store.kafka.keys': 'true',
      'keys.format.class': 'io.confluent.connect.s3.format.parquet.ParquetFormat',
      transforms: 'unwrap',
      'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
      'transforms.unwrap.delete.handling.mode': 'rewrite',
    },
  };
}

function blobConnector(endpoint: string, bucket: string) {
  return {
    name: 'blobs-lake',
    config: {
      'connector.class': SINK,
      topics: 'blobs',
      'store.url': endpoint,
      's3.bucket.name': bucket,
      's3.region': s3.region,
      'aws.access.key.id': s3.credentials.accessKeyId,
      'aws.secret.access.key': s3.credentials.secretAccessKey,
      // 3000 rows of 2000 poorly compressible characters: ~6 MB files, above the
      // smallest part size S3 allows, so each file goes in a multipart upload.
      'flush.size': '3000',
      'parquet.codec': 'none',
      's3.part.size': String(5 * MiB),
    },
  };
}

const orders = range(0, 3000).map((i) => cdcMessage(i, 2));
const blobs = range(0, 6000).map((i) => blobMessage(i));

describe('Parquet sink after kill -9 of the worker', () => {
  it('ends with the same local files, byte for byte, as a run without a crash', async () => {
    const reference = useTmpDir();
    const refLake = join(reference, 'lake');
    const clean = await startPipeline({
      dir: reference,
      partitions: 2,
      connector: ordersConnector(refLake),
    });
    await produce(clean.bootstrap, ORDERS, orders, 2);
    await waitForCommitted(clean, 'orders-lake', ORDERS, [1500, 1500]);
    expect(await clean.stop()).toBe(0);
    const expected = localObjects(refLake);
    const keyFiles = [...expected.keys()].filter((k) => k.endsWith('.keys.snappy.parquet'));
    expect(keyFiles.length * 2).toBe(expected.size);

    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const first = await startPipeline({ dir, partitions: 2, connector: ordersConnector(lake) });
    await produce(first.bootstrap, ORDERS, orders, 2);
    await waitFor('the first files', () => (localObjects(lake).size >= 8 ? true : undefined));
    await first.kill();
    const atKill = localObjects(lake).size;
    expect(atKill).toBeLessThan(expected.size);

    const second = await startPipeline({ dir, partitions: 2, connector: ordersConnector(lake) });
    await waitForCommitted(second, 'orders-lake', ORDERS, [1500, 1500]);
    const actual = localObjects(lake);
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    for (const [key, bytes] of expected) expect(actual.get(key)?.equals(bytes), key).toBe(true);
    // Temporaries of the write the kill interrupted are gone too.
    expect(listFiles(lake).filter((f) => !f.endsWith('.parquet'))).toEqual([]);
  });

  it('ends with the same S3 objects after a kill during a multipart upload', async () => {
    const reference = useTmpDir();
    const clean = await startPipeline({
      dir: reference,
      connector: blobConnector(s3.endpoint, 'reference'),
    });
    await produce(clean.bootstrap, 'blobs', blobs);
    await waitForCommitted(clean, 'blobs-lake', 'blobs', [6000]);
    expect(await clean.stop()).toBe(0);
    const expected = await s3Objects(s3.client, 'reference');
    expect(expected.size).toBe(2);
    for (const bytes of expected.values()) expect(bytes.length).toBeGreaterThan(5 * MiB);

    const dir = useTmpDir();
    // The first UploadPart is held (never answered): the worker is killed while its
    // multipart upload is in flight, after every record is in the broker.
    let uploading: (url: string) => void = () => undefined;
    const firstPart = new Promise<string>((resolve) => {
      uploading = resolve;
    });
    const interceptor = await useS3Interceptor(s3.endpoint, (req) => {
      if (!isUploadPart(req)) return 'forward';
      uploading(decodeURIComponent(req.url ?? ''));
      return 'hold';
    });
    const victim = await startPipeline({
      dir,
      connector: blobConnector(interceptor.endpoint, 'crashed'),
    });
    await produce(victim.bootstrap, 'blobs', blobs);
    expect(await firstPart).toMatch(
      /^\/crashed\/topics\/blobs\/partition=0\/blobs\+0\+0000000000\.parquet\?partNumber=1&/,
    );
    await victim.kill();
    // Nothing is visible of the interrupted upload.
    expect((await s3Objects(s3.client, 'crashed')).size).toBe(0);

    const second = await startPipeline({ dir, connector: blobConnector(s3.endpoint, 'crashed') });
    await waitForCommitted(second, 'blobs-lake', 'blobs', [6000]);
    const actual = await s3Objects(s3.client, 'crashed');
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [key, bytes] of expected) expect(actual.get(key)?.equals(bytes), key).toBe(true);
  });
});
