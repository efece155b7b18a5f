/**
 * JsonFormat and ByteArrayFormat files written by the real sink task (local folder
 * and S3 through s3rver) and read back by DuckDB, plus the recovery of row-format
 * groups from object metadata.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { crc32, gunzipSync, inflateRaw } from 'node:zlib';
import avro from 'avsc';
import { uncompressSync as snappyUncompress } from 'snappy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ManualClock,
  parseConfig,
  type Schema,
  Schemas,
  type SinkRecord,
  type TopicPartition,
} from '../../../src/connect/api/index.ts';
import { startS3, type TestS3 } from '../../../test/helpers/s3.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { type ParquetSinkConfig, parquetSinkConfigDefs, validateSinkConfig } from '../config.ts';
import type { FormatSettings } from '../file-format.ts';
import { javaFloat } from '../json-value.ts';
import { LocalStore } from '../local-store.ts';
import type { ObjectStore } from '../object-store.ts';
import { ParquetSinkTask } from '../parquet-sink-task.ts';
import { S3Store } from '../s3-store.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query } from './duckdb.ts';
import {
  cents,
  defaultPartitioner,
  orderRecords,
  sinkConfig,
  sinkRecord,
  T0,
  taskContext,
} from './fixtures.ts';
import { failAfter } from './stores.ts';

const ORDERS = 'shop.public.orders';
const partitions: TopicPartition[] = [{ topic: ORDERS, partition: 0 }];

let dir: string;
let s3: TestS3;
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  s3 = await startS3({ buckets: ['lake'] });
});
afterAll(async () => {
  await s3?.stop();
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A task started on `config` with its partitions open; `ctx` records what it seeks to. */
async function startTask(
  config: Record<string, string>,
  ctx = taskContext(partitions),
): Promise<ParquetSinkTask> {
  const t = new ParquetSinkTask();
  cleanups.push(() => t.stop());
  await t.start(config, ctx);
  await t.open(partitions);
  return t;
}

/** Put the records, then wait until preCommit offers `durable` (their files are in the store). */
async function putUntilDurable(t: ParquetSinkTask, records: SinkRecord[], durable: number) {
  await t.put(records);
  const next = records.length === 0 ? 0 : (records.at(-1)?.kafkaOffset as number) + 1;
  await waitFor(`offset ${durable} to be durable`, async () => {
    const [o] = await t.preCommit([{ topic: ORDERS, partition: 0, offset: next }]);
    return o?.offset === durable ? o : undefined;
  });
}

function s3Config(extra: Record<string, string>): Record<string, string> {
  return {
    'store.url': s3.endpoint,
    's3.bucket.name': 'lake',
    's3.region': s3.region,
    'aws.access.key.id': s3.credentials.accessKeyId,
    'aws.secret.access.key': s3.credentials.secretAccessKey,
    ...extra,
  };
}

function s3Store(): S3Store {
  const store = new S3Store({
    bucket: 'lake',
    region: s3.region,
    endpoint: s3.endpoint,
    pathStyle: true,
    partSize: 5 * 1024 * 1024,
    retries: 0,
    backoffMs: 10,
    credentials: s3.credentials,
  });
  cleanups.push(() => store.close());
  return store;
}

/** Copy every object under `prefix` to a folder, for DuckDB to read. */
async function download(store: ObjectStore, prefix: string, to: string): Promise<string[]> {
  const keys = await store.list(prefix);
  for (const key of keys) {
    const path = join(to, ...key.split('/'));
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, await store.get(key));
  }
  return keys;
}

function files(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

describe('JsonFormat', () => {
  it('writes one JSON object a line in .json files, named as Confluent names them, that DuckDB reads back', async () => {
    dir = mkdtempSync(join(tmpdir(), 'json-format-'));
    const t = await startTask({
      'store.url': pathToFileURL(dir).href,
      'flush.size': '100',
      'format.class': 'io.confluent.connect.s3.format.json.JsonFormat',
    });
    await putUntilDurable(t, orderRecords(ORDERS, 0, 0, 250), 200);

    const folder = join(dir, 'topics', ORDERS, 'partition=0');
    expect(files(folder)).toEqual([`${ORDERS}+0+0000000000.json`, `${ORDERS}+0+0000000100.json`]);
    const rows = await query(
      `SELECT count(*) AS n, sum(id) AS ids, count(status) AS statuses, min(amount) AS amount,
              min(shipped_at) AS shipped, bool_and(__op IN ('c', 'd')) AS ops
         FROM read_ndjson('${folder}/*.json')`,
    );
    // Decimals are base64 of their unscaled bytes by default (json.decimal.format=BASE64).
    expect(rows).toEqual([
      {
        n: 200n,
        ids: BigInt(200 * 1000 + (199 * 200) / 2),
        statuses: 160n,
        amount: expect.any(String),
        shipped: BigInt(T0),
        ops: true,
      },
    ]);
    const [first] = await query(
      `SELECT amount, created_on, status FROM read_ndjson('${folder}/${ORDERS}+0+0000000000.json') LIMIT 1`,
    );
    // Record 0: amount -5.00 is unscaled -500 = 0xFE0C; status null; created_on a day number.
    expect(first).toEqual({
      amount: Buffer.from([0xfe, 0x0c]).toString('base64'),
      created_on: 20_000n,
      status: null,
    });
  });

  it('with json.decimal.format=NUMERIC and s3.compression.type=gzip writes .json.gz objects to S3 with decimals as numbers', async () => {
    dir = mkdtempSync(join(tmpdir(), 'json-format-'));
    const t = await startTask(
      s3Config({
        'topics.dir': 'gz',
        'flush.size': '50',
        'format.class': 'JsonFormat',
        's3.compression.type': 'gzip',
        's3.compression.level': '9',
        'json.decimal.format': 'numeric',
      }),
    );
    await putUntilDurable(t, orderRecords(ORDERS, 0, 0, 100), 100);

    const keys = await download(s3Store(), 'gz/', dir);
    expect(keys).toEqual([
      `gz/${ORDERS}/partition=0/${ORDERS}+0+0000000000.json.gz`,
      `gz/${ORDERS}/partition=0/${ORDERS}+0+0000000050.json.gz`,
    ]);
    const rows = await query(
      `SELECT count(*) AS n, sum(amount)::VARCHAR AS total, min(amount)::VARCHAR AS least
         FROM read_json('${dir}/gz/**/*.json.gz', format = 'newline_delimited', compression = 'gzip',
                        columns = {amount: 'DECIMAL(10,2)'})`,
    );
    // amount(i) = (101 i - 500) / 100 for i in 0..99.
    const total = (101 * ((99 * 100) / 2) - 500 * 100) / 100;
    expect(rows).toEqual([{ n: 100n, total: total.toFixed(2), least: '-5.00' }]);
  });

  it('writes values as JsonConverter does: Java floats, exact int64, base64 bytes, maps, schemaless values', async () => {
    dir = mkdtempSync(join(tmpdir(), 'json-format-'));
    const schema = Schemas.struct([
      ['f32', Schemas.float32()],
      ['f64', Schemas.float64()],
      ['big', Schemas.int64()],
      ['raw', Schemas.bytes()],
      ['tags', Schemas.map(Schemas.string(), Schemas.int32())],
      ['pairs', Schemas.map(Schemas.int32(), Schemas.string())],
      ['note', Schemas.string({ optional: true, defaultValue: 'none' })],
    ]);
    const t = await startTask({
      'store.url': pathToFileURL(dir).href,
      'flush.size': '2',
      'format.class': 'JsonFormat',
    });
    const records = [
      sinkRecord(
        ORDERS,
        0,
        0,
        {
          f32: 0.1,
          f64: 1e7,
          big: 2n ** 62n,
          raw: new Uint8Array([1, 2, 255]),
          tags: { a: 1 },
          pairs: new Map([[7, 'seven']]),
          note: null,
        },
        { valueSchema: schema },
      ),
      sinkRecord(
        ORDERS,
        0,
        1,
        {
          f32: Number.NaN,
          f64: 2,
          big: 5,
          raw: new Uint8Array(),
          tags: {},
          pairs: new Map(),
          note: 'x\ny',
        },
        { valueSchema: schema },
      ),
      // Schemaless: written as they are, nothing inferred (a schema change starts a file).
      sinkRecord(ORDERS, 0, 2, { any: [1, 2.5, 'three', { deep: true }] }),
      sinkRecord(ORDERS, 0, 3, [null, 2n ** 60n]),
    ];
    await putUntilDurable(t, records, 4);

    const text = new LocalStore(pathToFileURL(dir).href);
    const bytes = await text.get(`topics/${ORDERS}/partition=0/${ORDERS}+0+0000000000.json`);
    expect(Buffer.from(bytes).toString('utf8')).toBe(
      [
        '{"f32":0.1,"f64":1.0E7,"big":4611686018427387904,"raw":"AQL/","tags":{"a":1},"pairs":[[7,"seven"]],"note":"none"}',
        '{"f32":"NaN","f64":2.0,"big":5,"raw":"","tags":{},"pairs":[],"note":"x\\ny"}',
        '',
      ].join('\n'),
    );
    const schemaless = await text.get(`topics/${ORDERS}/partition=0/${ORDERS}+0+0000000002.json`);
    expect(Buffer.from(schemaless).toString('utf8')).toBe(
      '{"any":[1,2.5,"three",{"deep":true}]}\n[null,1152921504606846976]\n',
    );
    const [row] = await query(
      `SELECT count(*) AS n FROM read_ndjson('${dir}/topics/**/*.json', ignore_errors = false)`,
    );
    expect(row).toEqual({ n: 4n });
  });

  it('refuses a record that does not fit its schema by name, and writes the others', async () => {
    dir = mkdtempSync(join(tmpdir(), 'json-format-'));
    const reported: string[] = [];
    const w = new ParquetSinkWriter(
      sinkConfig({ kind: 'local', url: '' }, { flushSize: 2, format: JSON_FORMAT }),
      new LocalStore(pathToFileURL(dir).href),
      new ManualClock(T0),
      {
        reportErrant: async (r, e) => {
          reported.push(`${r.kafkaOffset}: ${e.message}`);
        },
      },
    );
    cleanups.push(() => w.stop());
    await w.open(partitions);
    const schema = Schemas.struct([['id', Schemas.int64()]]);
    await w.put([
      sinkRecord(ORDERS, 0, 0, { id: 1 }, { valueSchema: schema }),
      sinkRecord(ORDERS, 0, 1, { id: 'one' }, { valueSchema: schema }),
      sinkRecord(ORDERS, 0, 2, { id: null }, { valueSchema: schema }),
      sinkRecord(ORDERS, 0, 3, { id: 3 }, { valueSchema: schema }),
    ]);
    await w.flushed();

    expect(reported).toEqual([
      `1: record ${ORDERS}-0@1 does not fit its schema: field 'id' has schema int64 but a string value`,
      `2: record ${ORDERS}-0@2 does not fit its schema: field 'id' is required and has no value and no default`,
    ]);
    const rows = await query(`SELECT id FROM read_ndjson('${dir}/topics/**/*.json') ORDER BY id`);
    expect(rows).toEqual([{ id: 1n }, { id: 3n }]);
    expect(w.committableOffsets()).toEqual([{ topic: ORDERS, partition: 0, offset: 4 }]);
  });
});

describe('ByteArrayFormat', () => {
  // With a bytes schema (ByteArrayConverter's optional bytes), or schemaless.
  const bytesRecords = (
    from: number,
    n: number,
    valueSchema: Schema | null = Schemas.bytes({ optional: true }),
  ) =>
    Array.from({ length: n }, (_, k) =>
      sinkRecord(ORDERS, 0, from + k, Buffer.from(`payload ${from + k}`), { valueSchema }),
    );

  it('writes each raw value followed by a line feed in .bin files that DuckDB reads back', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bytearray-format-'));
    const t = await startTask({
      'store.url': pathToFileURL(dir).href,
      'flush.size': '10',
      'format.class': 'io.confluent.connect.s3.format.bytearray.ByteArrayFormat',
    });
    await putUntilDurable(t, bytesRecords(0, 20), 20);

    const folder = join(dir, 'topics', ORDERS, 'partition=0');
    expect(files(folder)).toEqual([`${ORDERS}+0+0000000000.bin`, `${ORDERS}+0+0000000010.bin`]);
    const [file] = await query(
      `SELECT content FROM read_text('${folder}/${ORDERS}+0+0000000000.bin')`,
    );
    expect(file?.content).toBe(
      `${Array.from({ length: 10 }, (_, i) => `payload ${i}`).join('\n')}\n`,
    );
  });

  it('takes format.bytearray.separator as given, white space included, with its extension and gzip, on S3', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bytearray-format-'));
    const t = await startTask(
      s3Config({
        'topics.dir': 'raw',
        'flush.size': '5',
        'format.class': 'ByteArrayFormat',
        'format.bytearray.extension': '.txt',
        'format.bytearray.separator': ' | ',
        's3.compression.type': 'gzip',
      }),
    );
    await putUntilDurable(t, bytesRecords(0, 5, null), 5);

    const keys = await download(s3Store(), 'raw/', dir);
    expect(keys).toEqual([`raw/${ORDERS}/partition=0/${ORDERS}+0+0000000000.txt.gz`]);
    const unzipped = join(dir, 'unzipped.txt');
    writeFileSync(unzipped, gunzipSync(await s3Store().get(keys[0] as string)));
    const [file] = await query(`SELECT content FROM read_text('${unzipped}')`);
    expect(file?.content).toBe('payload 0 | payload 1 | payload 2 | payload 3 | payload 4 | ');
  });

  it('refuses a value that is not bytes by name, as ByteArrayConverter does', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bytearray-format-'));
    const t = await startTask({
      'store.url': pathToFileURL(dir).href,
      'flush.size': '10',
      'format.class': 'ByteArrayFormat',
    });
    await expect(
      t.put([sinkRecord(ORDERS, 0, 0, 'text', { valueSchema: Schemas.string() })]),
    ).rejects.toThrow(
      `record ${ORDERS}-0@0 does not fit its schema: ByteArrayFormat writes bytes values only, and the value schema is string`,
    );
    await expect(t.put([sinkRecord(ORDERS, 0, 1, { a: 1 })])).rejects.toThrow(
      'ByteArrayFormat writes bytes values only, and the value is object',
    );
  });
});

/**
 * An Avro long read as a BigInt (avsc's own long refuses values beyond 2^53): the
 * reader's own, so the file is checked by a decoder that shares nothing with the sink.
 */
const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (b: Buffer) => b.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(n);
    return b;
  },
  fromJSON: (n: number) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

/**
 * Avro files read back by avsc's container decoder (DuckDB's avro extension does not
 * load offline), after checking the container layout by hand: magic, header, and the
 * sync marker closing every block. With `bigintLongs`, longs are read as BigInts.
 */
/**
 * An Avro container file as Apache Avro's own Python implementation (Debian's
 * python3-avro, installed by test/global-setup.ts) reads it: codec and records, with
 * its logical types applied (decimals as text, timestamps as ISO text), bytes as hex.
 * Independent of avsc, which the sink uses to encode records.
 */
function readWithApacheAvro(path: string): {
  codec: string;
  records: Array<Record<string, unknown>>;
} {
  const script = `
import json, sys
from avro.datafile import DataFileReader
from avro.io import DatumReader
with open(sys.argv[1], 'rb') as f:
    reader = DataFileReader(f, DatumReader())
    codec = reader.get_meta('avro.codec').decode()
    records = list(reader)
def plain(v):
    if isinstance(v, bytes):
        return v.hex()
    if hasattr(v, 'isoformat'):
        return v.isoformat()
    return str(v)  # decimal.Decimal
print(json.dumps({'codec': codec, 'records': records}, default=plain))
`;
  const out = spawnSync('/usr/bin/python3', ['-c', script, path], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`Apache Avro's Python reader failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

async function readAvro(
  bytes: Uint8Array,
  bigintLongs = false,
): Promise<{
  schema: Record<string, unknown>;
  codec: string;
  records: Record<string, unknown>[];
  blocks: number;
}> {
  const file = Buffer.from(bytes);
  expect(file.subarray(0, 4)).toEqual(Buffer.from('Obj\x01', 'latin1'));
  const records: Record<string, unknown>[] = [];
  let schema: Record<string, unknown> = {};
  let codec = '';
  let sync: Buffer = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    const decoder = new avro.streams.BlockDecoder({
      ...(bigintLongs
        ? {
            parseHook: (s: avro.Schema) =>
              avro.Type.forSchema(s, {
                wrapUnions: 'never',
                typeHook: (t) =>
                  t === 'long' || (t as { type?: unknown }).type === 'long'
                    ? BIGINT_LONG
                    : undefined,
              }),
          }
        : {}),
      // Given codecs replace avsc's own, so all three are named here.
      codecs: {
        null: (block: Buffer, cb: (e: Error | null, b?: Buffer) => void) => cb(null, block),
        deflate: (block: Buffer, cb: (e: Error | null, b?: Buffer) => void) =>
          inflateRaw(block, cb),
        snappy: (block: Buffer, cb: (e: Error | null, b?: Buffer) => void) => {
          const data = snappyUncompress(block.subarray(0, block.length - 4)) as Buffer;
          const crc = block.readUInt32BE(block.length - 4);
          cb(crc === crc32(data) >>> 0 ? null : new Error('bad snappy CRC'), data);
        },
      },
    });
    decoder.on(
      'metadata',
      (_type: unknown, c: string, header: { meta: Record<string, Buffer>; sync: Buffer }) => {
        schema = JSON.parse(header.meta['avro.schema']?.toString() ?? '{}');
        codec = c;
        sync = header.sync;
      },
    );
    decoder.on('data', (r: Record<string, unknown>) => records.push(r));
    decoder.on('end', () => resolve());
    decoder.on('error', reject);
    decoder.end(file);
  });
  // Every block ends with the header's sync marker, the last one at the end of the file.
  let blocks = 0;
  for (let at = file.indexOf(sync); at >= 0; at = file.indexOf(sync, at + 16)) blocks++;
  expect(file.subarray(file.length - 16)).toEqual(sync);
  return { schema, codec, records, blocks: blocks - 1 };
}

describe('AvroFormat', () => {
  it.each(['null', 'deflate', 'snappy'])(
    "writes Avro container files (avro.codec=%s) with the schema AvroData makes, that Apache Avro's own reader reads back",
    async (codec) => {
      dir = mkdtempSync(join(tmpdir(), 'avro-format-'));
      const t = await startTask({
        'store.url': pathToFileURL(dir).href,
        'flush.size': '2000',
        'format.class': 'io.confluent.connect.s3.format.avro.AvroFormat',
        'avro.codec': codec,
      });
      await putUntilDurable(t, orderRecords(ORDERS, 0, 0, 2000), 2000);

      const folder = join(dir, 'topics', ORDERS, 'partition=0');
      expect(files(folder)).toEqual([`${ORDERS}+0+0000000000.avro`]);
      const store = new LocalStore(pathToFileURL(dir).href);
      const avroFile = await readAvro(
        await store.get(`topics/${ORDERS}/partition=0/${ORDERS}+0+0000000000.avro`),
      );
      expect(avroFile.codec).toBe(codec);
      expect(avroFile.blocks).toBeGreaterThan(1); // 2000 records are more than one 64 KiB block
      expect(avroFile.records).toHaveLength(2000);
      // The independent reader, Apache Avro's Python implementation, reads the same file
      // to the same records.
      const apache = readWithApacheAvro(join(folder, `${ORDERS}+0+0000000000.avro`));
      expect(apache.codec).toBe(codec);
      expect(apache.records).toHaveLength(2000);
      expect(apache.records[5]).toEqual({
        ...(avroFile.records[5] as Record<string, unknown>),
        amount: '0.05', // Decimal(10, 2) of 5 cents, as Avro's decimal logical type reads it
      });
      expect(apache.records.map((r) => r.id)).toEqual(
        avroFile.records.map((r) => (r as { id: number }).id),
      );
      expect(avroFile.records[5]).toEqual({
        id: 1005,
        customer: 'customer-5',
        status: null,
        amount: Buffer.from(cents(5 * 101 - 500)),
        created_on: 20_002,
        updated_at: (T0 + 5 * 60_000) * 1000,
        shipped_at: null,
        __op: 'c',
        __deleted: 'false',
      });
      expect(avroFile.schema).toMatchObject({
        type: 'record',
        name: 'shop.public.orders.Value',
        'connect.name': 'shop.public.orders.Value',
      });
      const fields = avroFile.schema.fields as Array<{ name: string; type: unknown }>;
      expect(Object.fromEntries(fields.map((f) => [f.name, f.type]))).toMatchObject({
        id: 'long',
        status: ['null', 'string'],
        amount: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 },
        created_on: { type: 'int', 'connect.name': 'io.debezium.time.Date', 'connect.version': 1 },
        shipped_at: ['null', { type: 'long', logicalType: 'timestamp-millis' }],
      });
    },
  );

  it('writes the same records to S3 as to a folder, byte for byte', async () => {
    dir = mkdtempSync(join(tmpdir(), 'avro-format-'));
    const local = await startTask({
      'store.url': pathToFileURL(dir).href,
      'flush.size': '50',
      'format.class': 'AvroFormat',
      'avro.codec': 'deflate',
    });
    await putUntilDurable(local, orderRecords(ORDERS, 0, 0, 50), 50);
    const remote = await startTask(
      s3Config({
        'topics.dir': 'avro',
        'flush.size': '50',
        'format.class': 'AvroFormat',
        'avro.codec': 'deflate',
      }),
    );
    await putUntilDurable(remote, orderRecords(ORDERS, 0, 0, 50), 50);

    const name = `${ORDERS}/partition=0/${ORDERS}+0+0000000000.avro`;
    const fromS3 = await s3Store().get(`avro/${name}`);
    expect(Buffer.from(fromS3)).toEqual(
      Buffer.from(await new LocalStore(pathToFileURL(dir).href).get(`topics/${name}`)),
    );
    expect((await readAvro(fromS3)).records).toHaveLength(50);
  });

  it('writes every int64 exactly, to the ends of its range, and refuses by name a schema name Avro cannot hold', async () => {
    dir = mkdtempSync(join(tmpdir(), 'avro-format-'));
    const reported: string[] = [];
    const store = new LocalStore(pathToFileURL(dir).href);
    const w = new ParquetSinkWriter(
      sinkConfig(
        { kind: 'local', url: '' },
        { flushSize: 1, format: { kind: 'avro', codec: 'null' } },
      ),
      store,
      new ManualClock(T0),
      {
        reportErrant: async (r, e) => {
          reported.push(`${r.kafkaOffset}: ${e.message}`);
        },
      },
    );
    cleanups.push(() => w.stop());
    await w.open(partitions);
    const ids = Schemas.struct(
      [
        ['id', Schemas.int64()],
        ['other', Schemas.int64({ optional: true })],
      ],
      { name: 'orders.Value' },
    );
    await w.put([
      sinkRecord(ORDERS, 0, 0, { id: 1 }, { valueSchema: { ...ids, name: 'orders-value' } }),
      sinkRecord(ORDERS, 0, 1, { id: 2n ** 60n + 1n, other: -(2n ** 63n) }, { valueSchema: ids }),
      sinkRecord(ORDERS, 0, 2, { id: 2n ** 63n - 1n, other: null }, { valueSchema: ids }),
      sinkRecord(ORDERS, 0, 3, { id: 2n ** 63n }, { valueSchema: ids }),
      sinkRecord(ORDERS, 0, 4, { id: 2, other: 3 }, { valueSchema: ids }),
    ]);
    await w.flushed();

    expect(reported).toEqual([
      `0: record ${ORDERS}-0@0 cannot be written: the value has schema name 'orders-value', which is not an Avro name`,
      `3: record ${ORDERS}-0@3 does not fit its schema: field 'id' is 9223372036854775808, outside the int64 range`,
    ]);
    const written = w.writer(partitions[0] as TopicPartition)?.written ?? [];
    expect(written).toEqual(
      [1, 2, 4].map((o) => `topics/${ORDERS}/partition=0/${ORDERS}+0+000000000${o}.avro`),
    );
    const records = [];
    for (const key of written)
      records.push(...(await readAvro(await store.get(key), true)).records);
    expect(records).toEqual([
      { id: 2n ** 60n + 1n, other: -(2n ** 63n) },
      { id: 2n ** 63n - 1n, other: null },
      { id: 2n, other: 3n },
    ]);
  });
});

const JSON_FORMAT: FormatSettings = {
  kind: 'json',
  decimalFormat: 'BASE64',
  compression: 'none',
  compressionLevel: -1,
};

describe('row-format recovery', () => {
  it('a restarted task seeks to where the JSON files end, read from their metadata', async () => {
    dir = mkdtempSync(join(tmpdir(), 'json-format-'));
    const config = {
      'store.url': pathToFileURL(dir).href,
      'flush.size': '100',
      'format.class': 'JsonFormat',
      's3.compression.type': 'gzip',
    };
    const first = await startTask(config);
    await putUntilDurable(first, orderRecords(ORDERS, 0, 0, 150), 100);
    await first.stop();

    const ctx = taskContext(partitions);
    await startTask(config, ctx);
    expect(ctx.seeks).toEqual([{ topic: ORDERS, partition: 0, offset: 100 }]);
  });

  it('replays a JSON group a crash cut short to its recorded boundary, even when the wall clock cut it, to identical objects', async () => {
    dir = mkdtempSync(join(tmpdir(), 'row-recovery-'));
    const partitioner = {
      ...defaultPartitioner,
      className: 'Field',
      fieldNames: ['status'],
    };
    const over = {
      flushSize: 1000,
      rotateScheduleIntervalMs: 60_000,
      partitioner,
      format: JSON_FORMAT,
    };
    const records = orderRecords(ORDERS, 0, 0, 40);

    // Crash-free run: the schedule fires after offset 24.
    const clockA = new ManualClock(T0);
    const reference = writer(over, localStore('reference'), clockA);
    await reference.open(partitions);
    await reference.put(records.slice(0, 25));
    clockA.advance(60_000);
    await reference.put([]);
    await reference.flushed();

    // Same run, but the store fails after the first of the group's four files.
    const clockB = new ManualClock(T0);
    const crashing = writer(over, failAfter(localStore('crashed'), 1), clockB);
    await crashing.open(partitions);
    await crashing.put(records.slice(0, 25));
    clockB.advance(60_000);
    await crashing.put([]);
    await expect(crashing.flushed()).rejects.toThrow(/injected failure/);

    // Restart much later: the clock alone would now cut elsewhere.
    const restarted = writer(over, localStore('crashed'), new ManualClock(T0 + 3_600_000));
    expect(await restarted.open(partitions)).toEqual([{ topic: ORDERS, partition: 0, offset: 0 }]);
    await restarted.put(records.slice(0, 30));
    await restarted.flushed();
    expect(await snapshot(localStore('crashed'))).toEqual(await snapshot(localStore('reference')));
    expect(restarted.committableOffsets()).toEqual([{ topic: ORDERS, partition: 0, offset: 25 }]);
  });

  it('resumes gzipped ByteArray files after the last durable group and rewrites what followed identically', async () => {
    dir = mkdtempSync(join(tmpdir(), 'row-recovery-'));
    const over = { flushSize: 10, format: GZIPPED_BYTES };
    const records = Array.from({ length: 25 }, (_, i) =>
      sinkRecord(ORDERS, 0, i, Buffer.from(`line ${i}`), { valueSchema: Schemas.bytes() }),
    );
    const reference = writer(over, localStore('reference'), new ManualClock(T0));
    await reference.open(partitions);
    await reference.put(records);
    await reference.flushed();

    const crashing = writer(over, failAfter(localStore('crashed'), 1), new ManualClock(T0));
    await crashing.open(partitions);
    await crashing.put(records);
    await expect(crashing.flushed()).rejects.toThrow(/injected failure/);

    const restarted = writer(over, localStore('crashed'), new ManualClock(T0));
    expect(await restarted.open(partitions)).toEqual([{ topic: ORDERS, partition: 0, offset: 10 }]);
    await restarted.put(records.slice(10));
    await restarted.flushed();
    expect(await snapshot(localStore('crashed'))).toEqual(await snapshot(localStore('reference')));
  });
});

const GZIPPED_BYTES: FormatSettings = {
  kind: 'bytearray',
  extension: '.bin',
  separator: Buffer.from('\n'),
  compression: 'gzip',
  compressionLevel: -1,
};

function writer(
  over: Partial<ParquetSinkConfig>,
  store: ObjectStore,
  clock: ManualClock,
): ParquetSinkWriter {
  const w = new ParquetSinkWriter(sinkConfig({ kind: 'local', url: '' }, over), store, clock);
  cleanups.push(() => w.stop());
  return w;
}

describe('row-format recovery from S3 metadata and foreign files', () => {
  it('a restarted task on S3 seeks to where the Avro files end, read from their user metadata', async () => {
    const config = s3Config({
      'topics.dir': 'resume',
      'flush.size': '40',
      'format.class': 'AvroFormat',
    });
    const first = await startTask(config);
    await putUntilDurable(first, orderRecords(ORDERS, 0, 0, 100), 80);
    await first.stop();

    const ctx = taskContext(partitions);
    await startTask(config, ctx);
    expect(ctx.seeks).toEqual([{ topic: ORDERS, partition: 0, offset: 80 }]);
    expect(
      await s3Store().readMetadata(`resume/${ORDERS}/partition=0/${ORDERS}+0+0000000040.avro`),
    ).toEqual({
      'connect-topic': ORDERS,
      'connect-partition': '0',
      'connect-group-start': '40',
      'connect-group-end': '79',
      'connect-group-files': '1',
    });
  });

  it("resumes at the committed offset, without seeking, over a JSON file Confluent's connector wrote", async () => {
    dir = mkdtempSync(join(tmpdir(), 'row-recovery-'));
    const folder = join(dir, 'topics', ORDERS, 'partition=0');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${ORDERS}+0+0000000000.json`), '{"id":1}\n{"id":2}\n');
    const ctx = taskContext(partitions);
    await startTask(
      { 'store.url': pathToFileURL(dir).href, 'flush.size': '10', 'format.class': 'JsonFormat' },
      ctx,
    );
    expect(ctx.seeks).toEqual([]);
  });
});

describe('Java number formatting of JSON floats', () => {
  it.each([
    [0.001, false, '0.001'],
    [1e-4, false, '1.0E-4'],
    [123456.789, false, '123456.789'],
    [9999999, false, '9999999.0'],
    [1e7, false, '1.0E7'],
    [-1.5e300, false, '-1.5E300'],
    [-0, false, '-0.0'],
    [0.1, true, '0.1'],
    [3.4028234663852886e38, true, '3.4028235E38'],
    [Number.POSITIVE_INFINITY, true, '"Infinity"'],
  ])('%d (float32: %s) prints as %s', (v, float32, text) => {
    expect(javaFloat(v, float32)).toBe(text);
  });
});

describe('format.class configuration', () => {
  function errors(config: Record<string, string>): Record<string, string> {
    const parsed = parseConfig(parquetSinkConfigDefs, {
      's3.bucket.name': 'b',
      'flush.size': '1',
      ...config,
    });
    const all = [...parsed.errors, ...validateSinkConfig(parsed.values)];
    // The first message per key: a refused value also counts as missing to later checks.
    return Object.fromEntries(all.reverse().map((e) => [e.key, e.message]));
  }

  it("accepts Confluent's JsonFormat, ByteArrayFormat and AvroFormat class names and their short names", () => {
    for (const c of [
      'io.confluent.connect.s3.format.json.JsonFormat',
      'JsonFormat',
      'io.confluent.connect.s3.format.bytearray.ByteArrayFormat',
      'ByteArrayFormat',
    ]) {
      expect(errors({ 'format.class': c, 's3.compression.type': 'gzip' })).toEqual({});
    }
    for (const c of ['io.confluent.connect.s3.format.avro.AvroFormat', 'AvroFormat']) {
      expect(errors({ 'format.class': c, 'avro.codec': 'Snappy' })).toEqual({});
    }
  });

  it.each([
    [
      { 'format.class': 'io.confluent.connect.s3.format.csv.CsvFormat' },
      'format.class',
      'not supported: format.class=io.confluent.connect.s3.format.csv.CsvFormat',
    ],
    [
      {
        'format.class': 'JsonFormat',
        'store.kafka.keys': 'true',
        'keys.format.class': 'ParquetFormat',
        'behavior.on.null.values': 'write',
      },
      'keys.format.class',
      'not supported: keys.format.class=ParquetFormat with behavior.on.null.values=write and format.class=JsonFormat',
    ],
    [
      { 's3.compression.type': 'gzip' },
      's3.compression.type',
      'not supported: s3.compression.type=gzip with ParquetFormat',
    ],
    [
      { 'json.decimal.format': 'NUMERIC' },
      'json.decimal.format',
      'applies to JsonFormat only, not format.class=io.confluent.connect.s3.format.parquet.ParquetFormat',
    ],
    [
      { 'format.class': 'JsonFormat', 'parquet.codec': 'zstd' },
      'parquet.codec',
      'applies to ParquetFormat only, not format.class=JsonFormat',
    ],
    [
      { 'format.class': 'JsonFormat', 'format.bytearray.separator': '|' },
      'format.bytearray.separator',
      'applies to ByteArrayFormat only',
    ],
    [
      { 'format.class': 'AvroFormat', 'avro.codec': 'bzip2' },
      'avro.codec',
      'not supported: avro.codec=bzip2: this sink has no bzip2 compressor',
    ],
    [
      { 'format.class': 'AvroFormat', 's3.compression.type': 'gzip' },
      's3.compression.type',
      'not supported: s3.compression.type=gzip with AvroFormat; Avro compresses inside the file: use avro.codec',
    ],
    [{ 'avro.codec': 'deflate' }, 'avro.codec', 'applies to AvroFormat only'],
    [
      { 'keys.format.class': 'ByteArrayFormat', 'store.kafka.keys': 'true' },
      'keys.format.class',
      'not supported: keys.format.class=ByteArrayFormat; keys and headers files are written as io.confluent.connect.s3.format.parquet.ParquetFormat, io.confluent.connect.s3.format.avro.AvroFormat, io.confluent.connect.s3.format.json.JsonFormat (or their short names)',
    ],
  ])('%o is refused by name', (config, key, message) => {
    expect(errors(config)[key]).toContain(message);
  });
});

function localStore(sub: string): LocalStore {
  return new LocalStore(pathToFileURL(join(dir, sub)).href);
}

/** Every object with its bytes and metadata, for byte-for-byte comparisons. */
async function snapshot(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await store.list('')) {
    const bytes = Buffer.from(await store.get(key));
    const text = key.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
    out.set(key, `${text} ${JSON.stringify(await store.readMetadata(key))}`);
  }
  return out;
}
