/**
 * store.kafka.keys / store.kafka.headers: Confluent's keys and headers files beside each
 * value file (record-views.ts), read back with DuckDB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Header,
  ManualClock,
  type Schema,
  Schemas,
  type SinkRecord,
  type TopicPartition,
} from '../../../src/connect/api/index.ts';
import type { ParquetSinkConfig } from '../config.ts';
import { LocalStore } from '../local-store.ts';
import type { ObjectStore } from '../object-store.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query } from './duckdb.ts';
import { sinkConfig, sinkRecord, T0 } from './fixtures.ts';
import { failPutsOf, snapshot } from './stores.ts';

let dir: string;
const cleanups: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parquet-views-'));
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  rmSync(dir, { recursive: true, force: true });
});

const TOPIC = 'orders';
const tp: TopicPartition = { topic: TOPIC, partition: 0 };
const FOLDER = `topics/${TOPIC}/partition=0`;
const VIEWS = { storeKeys: true, storeHeaders: true } as const;

function localStore(sub = 'lake'): LocalStore {
  return new LocalStore(pathToFileURL(join(dir, sub)).href);
}

function writer(
  over: Partial<ParquetSinkConfig>,
  store: ObjectStore = localStore(),
  reportErrant?: (record: SinkRecord, error: Error) => Promise<void>,
): ParquetSinkWriter {
  const w = new ParquetSinkWriter(
    sinkConfig({ kind: 'local', url: '' }, over),
    store,
    new ManualClock(T0),
    reportErrant ? { reportErrant } : {},
  );
  cleanups.push(() => w.stop());
  return w;
}

const valueSchema = Schemas.struct([['v', Schemas.int32()]]);
const keySchema = Schemas.struct([['id', Schemas.int32()]], { name: 'orders.Key' });

function record(
  offset: number,
  extra: { key?: unknown; keySchema?: Schema | null; headers?: Header[] } = {},
): SinkRecord {
  return sinkRecord(
    TOPIC,
    0,
    offset,
    { v: offset },
    {
      valueSchema,
      key: { id: 100 + offset },
      keySchema,
      headers: [
        { key: 'trace', value: `t${offset}` },
        { key: 'raw', value: new Uint8Array([1, 2, offset]) },
        { key: 'n', value: offset },
      ],
      ...extra,
    },
  );
}

/** The rows of one file set, joined on their row number: row i of each file. */
async function fileSet(start: string, ext = '.snappy.parquet') {
  const file = (view: string) => `'${dir}/lake/${FOLDER}/${TOPIC}+0+${start}${view}${ext}'`;
  return query(
    `SELECT v.v, k.key.id AS key_id, h.headers
     FROM read_parquet(${file('')}, file_row_number = true) v
     JOIN read_parquet(${file('.keys')}, file_row_number = true) k USING (file_row_number)
     JOIN read_parquet(${file('.headers')}, file_row_number = true) h USING (file_row_number)
     ORDER BY file_row_number`,
  );
}

const headersOf = (offset: number) => [
  { key: 'trace', value: `t${offset}` },
  { key: 'raw', value: Buffer.from([1, 2, offset]).toString('base64') },
  { key: 'n', value: String(offset) },
];

describe('Parquet sink keys and headers files (store.kafka.keys / store.kafka.headers)', () => {
  it("writes <name>.keys<ext> and <name>.headers<ext> beside each value file, as Confluent's RecordViews, aligned row by row", async () => {
    const w = writer({ ...VIEWS, flushSize: 3 });
    await w.open([tp]);
    await w.put([0, 1, 2, 3, 4, 5].map((o) => record(o)));
    await w.flushed();

    expect([...(w.writer(tp)?.written ?? [])].sort()).toEqual(
      ['0000000000', '0000000003'].flatMap((start) =>
        ['.headers', '.keys', ''].map(
          (view) => `${FOLDER}/${TOPIC}+0+${start}${view}.snappy.parquet`,
        ),
      ),
    );
    for (const [start, offsets] of [
      ['0000000000', [0, 1, 2]],
      ['0000000003', [3, 4, 5]],
    ] as const) {
      expect(await fileSet(start)).toEqual(
        offsets.map((o) => ({ v: o, key_id: 100 + o, headers: headersOf(o) })),
      );
    }
    // Confluent's enveloped schemas: RecordKey { key }, RecordHeaders { headers }.
    const columns = await query(
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${dir}/lake/${FOLDER}/*.keys.snappy.parquet', hive_partitioning = false))
       UNION ALL
       SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${dir}/lake/${FOLDER}/*.headers.snappy.parquet', hive_partitioning = false))`,
    );
    expect(columns).toEqual([
      { column_name: 'key', column_type: 'STRUCT(id INTEGER)' },
      { column_name: 'headers', column_type: 'STRUCT("key" VARCHAR, "value" VARCHAR)[]' },
    ]);
  });

  it('writes a schemaless key (JsonConverter with schemas.enable=false) under an inferred schema', async () => {
    const w = writer({ storeKeys: true, flushSize: 2 });
    await w.open([tp]);
    await w.put([record(0, { keySchema: null }), record(1, { keySchema: null })]);
    await w.flushed();
    const rows = await query(
      `SELECT key.id AS id FROM read_parquet('${dir}/lake/${FOLDER}/${TOPIC}+0+0000000000.keys.snappy.parquet')`,
    );
    expect(rows).toEqual([{ id: 100n }, { id: 101n }]);
  });

  it('fails a record with a null key, without headers or with a null header value, and a key that does not fit its schema, writing it in none of the files', async () => {
    const reported: Array<{ offset: number; error: Error }> = [];
    const w = writer({ ...VIEWS, flushSize: 3 }, localStore(), async (r, error) => {
      reported.push({ offset: r.kafkaOffset, error });
    });
    const int8Key = Schemas.int8();
    await w.open([tp]);
    await w.put([
      record(0, { key: 1, keySchema: int8Key }),
      record(1, { key: null, keySchema: int8Key }),
      record(2, { key: 2, keySchema: int8Key, headers: [] }),
      record(3, { key: 3, keySchema: int8Key, headers: [{ key: 'h', value: null }] }),
      // The value row is appended, then the key row fails: the value row is taken back.
      record(4, { key: 300, keySchema: int8Key }),
      record(5, { key: 5, keySchema: int8Key }),
      record(6, { key: 6, keySchema: int8Key }),
    ]);
    await w.flushed();

    expect(reported.map((r) => [r.offset, r.error.name])).toEqual([
      [1, 'DataException'],
      [2, 'DataException'],
      [3, 'DataException'],
      [4, 'DataException'],
    ]);
    expect(reported[0]?.error.message).toMatch(/orders-0@1 .*key cannot be null/);
    expect(reported[1]?.error.message).toMatch(/orders-0@2 .*headers cannot be null or empty/);
    expect(reported[2]?.error.message).toMatch(/orders-0@3 .*header 'h' has a null value/);
    const rows = await query(
      `SELECT v.v, k.key FROM read_parquet('${dir}/lake/${FOLDER}/${TOPIC}+0+0000000000.snappy.parquet', file_row_number = true) v
       JOIN read_parquet('${dir}/lake/${FOLDER}/${TOPIC}+0+0000000000.keys.snappy.parquet', file_row_number = true) k
       USING (file_row_number) ORDER BY file_row_number`,
    );
    expect(rows).toEqual([
      { v: 0, key: 1 },
      { v: 5, key: 5 },
      { v: 6, key: 6 },
    ]);
    const [counts] = await query(
      `SELECT count(*) AS n FROM read_parquet('${dir}/lake/${FOLDER}/*.headers.snappy.parquet')`,
    );
    expect(counts).toEqual({ n: 3n });
  });

  it('without errors.tolerance a null key fails put with a DataException naming the record', async () => {
    const w = writer({ storeKeys: true, flushSize: 3 });
    await w.open([tp]);
    await expect(w.put([record(0), record(1, { key: null })])).rejects.toMatchObject({
      name: 'DataException',
      message: expect.stringMatching(/record orders-0@1 .*key cannot be null/),
    });
  });

  it('rotates the file set when the key schema changes, as a value schema change does', async () => {
    const w = writer({ ...VIEWS, flushSize: 100, compatibility: 'NONE' });
    await w.open([tp]);
    await w.put([
      record(0),
      record(1),
      record(2, { key: 'k2', keySchema: Schemas.string() }),
      record(3, { key: 'k3', keySchema: Schemas.string() }),
    ]);
    w.writer(tp)?.closeGroup();
    await w.flushed();

    const values = (w.writer(tp)?.written ?? []).filter((k) => !/\.(keys|headers)\./.test(k));
    expect(values).toEqual([
      `${FOLDER}/${TOPIC}+0+0000000000.snappy.parquet`,
      `${FOLDER}/${TOPIC}+0+0000000002.snappy.parquet`,
    ]);
    const keys = await query(
      `SELECT key FROM read_parquet('${dir}/lake/${FOLDER}/${TOPIC}+0+0000000002.keys.snappy.parquet')`,
    );
    expect(keys).toEqual([{ key: 'k2' }, { key: 'k3' }]);
  });
});

describe('Parquet sink keys and headers files after a crash', () => {
  const records = Array.from({ length: 25 }, (_, i) => record(i));
  const over = { ...VIEWS, flushSize: 10 };

  async function reference(): Promise<Map<string, string>> {
    const w = writer(over, localStore('reference'));
    await w.open([tp]);
    await w.put(records);
    await w.flushed();
    return snapshot(localStore('reference'));
  }

  it.each([
    ['at the first value file, after its keys and headers files', /\+0000000000\.snappy\.parquet$/],
    ['at the first keys file', /\+0000000000\.keys\.snappy\.parquet$/],
    ['at the second value file, the first set durable', /\+0000000010\.snappy\.parquet$/],
  ])('a crash %s neither loses nor duplicates a record', async (_, failing) => {
    const expected = await reference();
    const crashing = writer(over, failPutsOf(localStore(), failing));
    await crashing.open([tp]);
    await crashing.put(records);
    await expect(crashing.flushed()).rejects.toThrow(/injected failure/);
    // No value file is in the store without its keys and headers files.
    const left = [...(await snapshot(localStore())).keys()];
    for (const value of left.filter((k) => !/\.(keys|headers)\./.test(k))) {
      expect(left).toContain(value.replace('.snappy.parquet', '.keys.snappy.parquet'));
      expect(left).toContain(value.replace('.snappy.parquet', '.headers.snappy.parquet'));
    }

    const restarted = writer(over, localStore());
    const [resumed] = await restarted.open([tp]);
    await restarted.put(records.slice(resumed?.offset ?? 0));
    await restarted.flushed();
    expect(await snapshot(localStore())).toEqual(expected);
    expect(await fileSet('0000000000')).toHaveLength(10);
    expect(await fileSet('0000000010')).toHaveLength(10);
  });
});
