import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, type TopicPartition } from '../../../src/connect/api/index.ts';
import { startS3, type TestS3 } from '../../../test/helpers/s3.ts';
import type { ParquetSinkConfig } from '../config.ts';
import { S3Store, type S3StoreSettings } from '../s3-store.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query, scan } from './duckdb.ts';
import { orderRecords, sinkConfig, sinkRecord, T0 } from './fixtures.ts';

const BUCKET = 'lake';
const ORDERS = 'shop.public.orders';
const tp = (partition = 0, topic = ORDERS): TopicPartition => ({ topic, partition });

let s3: TestS3;
let dir: string;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  s3 = await startS3({ buckets: [BUCKET] });
});
afterAll(async () => {
  await s3?.stop();
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A loopback proxy in front of s3rver that answers matching requests with S3's
 * InternalError (HTTP 500), counting them and the multipart aborts that pass through.
 */
async function faultyProxy(target: string, fail: (req: IncomingMessage) => boolean) {
  const upstream = new URL(target);
  const state = { failures: 0, aborts: 0 };
  const server = createServer((req, res) => {
    if (fail(req)) {
      state.failures++;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>',
      );
      return;
    }
    if (req.method === 'DELETE' && /uploadId=/.test(req.url ?? '')) state.aborts++;
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get failures() {
      return state.failures;
    },
    get aborts() {
      return state.aborts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function settings(over: Partial<S3StoreSettings> = {}): S3StoreSettings {
  return {
    bucket: BUCKET,
    region: s3.region,
    endpoint: s3.endpoint,
    pathStyle: true,
    partSize: 5 * 1024 * 1024,
    retries: 2,
    backoffMs: 1,
    credentials: s3.credentials,
    sleep: async () => undefined,
    ...over,
  };
}

function s3Store(over: Partial<S3StoreSettings> = {}): S3Store {
  const store = new S3Store(settings(over));
  cleanups.push(() => store.close());
  return store;
}

function sink(over: Partial<ParquetSinkConfig>, store = s3Store(), clock = new ManualClock(T0)) {
  const w = new ParquetSinkWriter(sinkConfig({ kind: 'local', url: '' }, over), store, clock);
  cleanups.push(() => w.stop());
  return w;
}

/** Download every object under a prefix into a fresh folder, for DuckDB to read. */
async function download(store: S3Store, prefix: string): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 's3-download-'));
  for (const key of await store.list(prefix)) {
    const path = join(dir, ...key.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, await store.get(key));
  }
  return dir;
}

describe('Parquet sink writer on S3 (s3rver)', () => {
  it('writes CDC and schemaless JSON records that DuckDB reads back after download', async () => {
    const w = sink({
      flushSize: 50,
      partitioner: { ...sinkConfig({ kind: 'local', url: '' }).partitioner, className: 'Hourly' },
    });
    await w.open([tp(0), tp(0, 'clicks')]);
    const clicks = Array.from({ length: 50 }, (_, i) =>
      sinkRecord('clicks', 0, i, { page: `/p/${i % 4}`, ms: i * 10 }),
    );
    await w.put([...orderRecords(ORDERS, 0, 0, 100), ...clicks]);
    await w.flushed();
    const folder = await download(s3Store(), 'topics/');
    const byHour = await query(
      `SELECT hour, count(*) AS n, sum(id) AS ids FROM ${scan(join(folder, 'topics', ORDERS))} GROUP BY 1 ORDER BY 1`,
    );
    // One record a minute from 22:30: 30 in hour 22, 60 in 23, 10 past midnight.
    expect(byHour.map((r) => [r.hour, r.n])).toEqual([
      ['00', 10n],
      ['22', 30n],
      ['23', 60n],
    ]);
    const [clickAgg] = await query(
      `SELECT count(*) AS n, sum(ms) AS ms, count(DISTINCT page) AS pages FROM ${scan(join(folder, 'topics/clicks'))}`,
    );
    expect(clickAgg).toEqual({ n: 50n, ms: BigInt(10 * ((49 * 50) / 2)), pages: 4n });
  });

  it('recovers from the bucket after a crash and replays to the same objects', async () => {
    const prefix = 'recovery';
    const first = sink({ flushSize: 40, topicsDir: prefix });
    await first.open([tp()]);
    await first.put(orderRecords(ORDERS, 0, 0, 90)); // 10 records lost in the crash
    await first.flushed();
    const second = sink({ flushSize: 40, topicsDir: prefix });
    expect(await second.open([tp()])).toEqual([{ topic: ORDERS, partition: 0, offset: 80 }]);
    await second.put(orderRecords(ORDERS, 0, 80, 40));
    await second.flushed();
    const keys = await s3Store().list(`${prefix}/`);
    expect(keys.map((k) => k.slice(-22))).toEqual(
      ['000000', '000040', '000080'].map((s) => `0${s}.snappy.parquet`),
    );
  });

  it('uploads files larger than s3.part.size in parts that complete into one object', async () => {
    const store = s3Store();
    const big = new Uint8Array(11 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
    await store.put('multipart/big.bin', big);
    expect(Buffer.from(await store.get('multipart/big.bin')).equals(Buffer.from(big))).toBe(true);
    expect(await store.readTail('multipart/big.bin', 3)).toEqual(big.subarray(big.length - 3));
  });

  it('retries a failing part, then aborts the upload so no partial object is visible', async () => {
    const proxy = await faultyProxy(s3.endpoint, (req) => /partNumber=2/.test(req.url ?? ''));
    const store = s3Store({ endpoint: proxy.endpoint, retries: 2 });
    const big = new Uint8Array(11 * 1024 * 1024).fill(7);
    try {
      await expect(store.put('multipart/broken.bin', big)).rejects.toMatchObject({
        retriable: true,
        message: expect.stringMatching(
          /cannot upload part 2 of s3:\/\/lake\/multipart\/broken.bin after 3 attempts: InternalError/,
        ),
      });
      expect(proxy.failures).toBe(3);
      expect(await s3Store().list('multipart/broken')).toEqual([]);
      expect(proxy.aborts).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('fails with a message naming the bucket when the bucket does not exist', async () => {
    const store = s3Store({ bucket: 'no-such-bucket' });
    await expect(store.check()).rejects.toThrow(/cannot list s3:\/\/no-such-bucket: NoSuchBucket/);
    const w = sink({ flushSize: 1 }, store);
    await expect(w.open([tp()])).rejects.toMatchObject({
      kind: 'connect',
      message: expect.stringMatching(/cannot list s3:\/\/no-such-bucket\/topics\/.*NoSuchBucket/),
    });
  });

  it('retries a refused connection with back-off, then fails as retriable', async () => {
    const store = s3Store({ endpoint: 'http://127.0.0.1:9', retries: 2 });
    await expect(store.put('x', new Uint8Array([1]))).rejects.toMatchObject({
      retriable: true,
      message: expect.stringMatching(/cannot write s3:\/\/lake\/x after 3 attempts/),
    });
  });
});
