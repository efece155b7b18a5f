/**
 * behavior.on.null.values=write as Confluent's S3 sink does it (S3SinkConnectorConfig,
 * S3SinkConnectorValidator, TombstoneSupportedPartitioner, KeyValueHeaderRecordWriter-
 * Provider): null values go to the folder tombstone.encoded.partition names (default
 * `tombstone`), where only their keys (and headers) files are written; keys must be
 * stored. Also: those folders recover and replay exactly like the others.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Header,
  ManualClock,
  parseConfig,
  Schemas,
  type SinkRecord,
} from '../../../src/connect/api/index.ts';
import {
  type ParquetSinkConfig,
  parquetSinkConfigDefs,
  toSinkConfig,
  validateSinkConfig,
} from '../config.ts';
import { LocalStore } from '../local-store.ts';
import type { ObjectInfo, ObjectStore } from '../object-store.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query } from './duckdb.ts';
import { defaultPartitioner, sinkConfig, sinkRecord, T0 } from './fixtures.ts';
import { snapshot } from './stores.ts';

const TOPIC = 'orders';
const tp = { topic: TOPIC, partition: 0 };
const valueSchema = Schemas.struct([
  ['id', Schemas.int32()],
  ['country', Schemas.string()],
]);
const keySchema = Schemas.struct([['id', Schemas.int32()]]);
const headers = (offset: number): Header[] => [{ key: 'trace', value: `t${offset}` }];

/** Offsets in `deletes` are tombstones of key id = offset; the others rows of country de/fr. */
function records(from: number, to: number, deletes: readonly number[]): SinkRecord[] {
  const out: SinkRecord[] = [];
  for (let o = from; o < to; o++) {
    const deleted = deletes.includes(o);
    out.push(
      sinkRecord(TOPIC, 0, o, deleted ? null : { id: o, country: o % 2 ? 'de' : 'fr' }, {
        key: { id: o },
        keySchema,
        valueSchema: deleted ? null : valueSchema,
        headers: headers(o),
      }),
    );
  }
  return out;
}

let dir: string;
const writers: ParquetSinkWriter[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tombstones-'));
});
afterEach(async () => {
  for (const w of writers.splice(0)) await w.stop();
  rmSync(dir, { recursive: true, force: true });
});

const lake = (sub = 'lake') => new LocalStore(pathToFileURL(join(dir, sub)).href);

/** A local folder that records the order of puts and fails every put after the first `okPuts`. */
class RecordingStore extends LocalStore {
  readonly puts: string[] = [];
  constructor(
    url: string,
    private readonly okPuts = Number.POSITIVE_INFINITY,
  ) {
    super(url);
  }
  override async put(key: string, bytes: Uint8Array, info?: ObjectInfo): Promise<void> {
    if (this.puts.length >= this.okPuts) throw new Error('injected failure');
    this.puts.push(key);
    await super.put(key, bytes, info);
  }
}

function sink(over: Partial<ParquetSinkConfig>, store: ObjectStore = lake()): ParquetSinkWriter {
  const w = new ParquetSinkWriter(
    sinkConfig(
      { kind: 'local', url: '' },
      { nullBehavior: 'write', storeKeys: true, storeHeaders: true, flushSize: 8, ...over },
    ),
    store,
    new ManualClock(T0),
    { encoder: 'inline' },
  );
  writers.push(w);
  return w;
}

const field = (over: Partial<ParquetSinkConfig['partitioner']> = {}) =>
  ({
    ...defaultPartitioner,
    className: 'FieldPartitioner',
    fieldNames: ['country'],
    tombstonePartition: 'deleted',
    ...over,
  }) satisfies ParquetSinkConfig['partitioner'];

describe('behavior.on.null.values=write, as Confluent writes tombstones', () => {
  it('requires store.kafka.keys, naming both keys as Confluent does', () => {
    const parsed = parseConfig(parquetSinkConfigDefs, {
      's3.bucket.name': 'b',
      'flush.size': '10',
      'behavior.on.null.values': 'write',
    });
    const errors = validateSinkConfig(parsed.values);
    expect(errors.map((e) => e.key)).toEqual(['store.kafka.keys', 'behavior.on.null.values']);
    expect(errors[0]?.message).toMatch(
      /Writing Kafka record keys to storage is mandatory when tombstone writing is enabled/,
    );
  });

  it("takes tombstone.encoded.partition (default 'tombstone') and refuses an empty one", () => {
    const base = {
      's3.bucket.name': 'b',
      'flush.size': '10',
      'behavior.on.null.values': 'write',
      'store.kafka.keys': 'true',
      'keys.format.class': 'ParquetFormat',
    };
    const parsed = parseConfig(parquetSinkConfigDefs, base);
    expect(validateSinkConfig(parsed.values)).toEqual([]);
    expect(toSinkConfig(parsed.values).partitioner.tombstonePartition).toBe('tombstone');
    const named = parseConfig(parquetSinkConfigDefs, {
      ...base,
      'tombstone.encoded.partition': 'deleted',
    });
    expect(validateSinkConfig(named.values)).toEqual([]);
    expect(toSinkConfig(named.values).partitioner.tombstonePartition).toBe('deleted');
    const empty = parseConfig(parquetSinkConfigDefs, {
      ...base,
      'tombstone.encoded.partition': '',
    });
    expect(empty.errors.map((e) => e.key)).toEqual(['tombstone.encoded.partition']);
  });

  it('writes tombstones as keys and headers files in their own folder, with no value file there', async () => {
    const store = new RecordingStore(pathToFileURL(join(dir, 'lake')).href);
    const w = sink({ partitioner: field() }, store);
    await w.open([tp]);
    await w.put(records(0, 8, [2, 5]));
    await w.flushed();

    expect(readdirSync(join(dir, 'lake/topics/orders/deleted')).sort()).toEqual([
      'orders+0+0000000002.headers.snappy.parquet',
      'orders+0+0000000002.keys.snappy.parquet',
    ]);
    const deleted = `${dir}/lake/topics/orders/deleted/orders+0+0000000002`;
    expect(
      await query(
        `SELECT k.key.id AS id, h.headers[1].value AS trace
         FROM read_parquet('${deleted}.keys.snappy.parquet', file_row_number = true) k
         JOIN read_parquet('${deleted}.headers.snappy.parquet', file_row_number = true) h USING (file_row_number)
         ORDER BY file_row_number`,
      ),
    ).toEqual([
      { id: 2, trace: 't2' },
      { id: 5, trace: 't5' },
    ]);
    const [values] = await query(
      `SELECT count(*) AS n FROM read_parquet('${dir}/lake/topics/orders/country=*/orders+0+*[0-9].snappy.parquet')`,
    );
    expect(values).toEqual({ n: 6n });
    // The tombstone folder's keys file is its commit point: it is written with the value
    // files, after every headers and other keys file.
    const keysOfDeleted = store.puts.indexOf(
      `topics/orders/deleted/orders+0+0000000002.keys.snappy.parquet`,
    );
    const lastView = Math.max(
      ...store.puts.map((k, i) =>
        k.includes('/country=') && /\.(keys|headers)\./.test(k) ? i : -1,
      ),
      store.puts.indexOf(`topics/orders/deleted/orders+0+0000000002.headers.snappy.parquet`),
    );
    expect(keysOfDeleted).toBeGreaterThan(lastView);
  });

  it('recovers after a complete group and replays a group cut short to byte-identical files', async () => {
    const all = records(0, 20, [2, 5, 8, 9]);
    const reference = sink({ partitioner: field() }, lake('reference'));
    await reference.open([tp]);
    await reference.put(all);
    await reference.flushed();

    // The first group (0..7) is whole; the second fails after three of its files.
    const crashing = sink(
      { partitioner: field() },
      new RecordingStore(pathToFileURL(join(dir, 'crashed')).href, 8 + 3),
    );
    await crashing.open([tp]);
    await crashing.put(all.slice(0, 16));
    await expect(crashing.flushed()).rejects.toThrow(/injected failure/);

    const restarted = sink({ partitioner: field() }, lake('crashed'));
    expect(await restarted.open([tp])).toEqual([{ ...tp, offset: 8 }]);
    await restarted.put(all.slice(8));
    await restarted.flushed();
    expect(await snapshot(lake('crashed'))).toEqual(await snapshot(lake('reference')));

    const again = sink({ partitioner: field() }, lake('crashed'));
    expect(await again.open([tp])).toEqual([{ ...tp, offset: 16 }]);
  });

  it('recovers a group of tombstones only, from its keys file', async () => {
    const w = sink({ flushSize: 3 });
    await w.open([tp]);
    await w.put(records(0, 3, [0, 1, 2]));
    await w.flushed();
    expect(readdirSync(join(dir, 'lake/topics/orders'))).toEqual(['tombstone']);

    const next = sink({ flushSize: 3 });
    expect(await next.open([tp])).toEqual([{ ...tp, offset: 3 }]);
  });

  it('does not rotate on partition change when records move to or from the tombstone folder', async () => {
    const hourly = { ...field(), className: 'Hourly', timestampExtractor: 'Record' };
    const w = sink({ partitioner: hourly, flushSize: 100, rotateIntervalMs: 3_600_000 });
    await w.open([tp]);
    await w.put(records(0, 6, [1, 3])); // one hour: tombstones interleaved
    await w.put(records(60, 61, [])); // the next hour: rotates (rotate.interval.ms, new folder)
    w.writer(tp)?.closeGroup();
    await w.flushed();
    const written = w.writer(tp)?.written ?? [];
    const starts = new Set(written.map((k) => k.match(/\+(\d+)\./)?.[1]));
    expect([...starts].sort()).toEqual(['0000000000', '0000000001', '0000000060']);
    expect(written.filter((k) => !/\.(keys|headers)\./.test(k))).toEqual([
      'topics/orders/year=2026/month=11/day=28/hour=22/orders+0+0000000000.snappy.parquet',
      'topics/orders/year=2026/month=11/day=28/hour=23/orders+0+0000000060.snappy.parquet',
    ]);
  });

  it('fails the task when a value would go to the tombstone folder, as Confluent has no value writer there', async () => {
    const w = sink({
      partitioner: {
        ...field(),
        className: 'TimeBased',
        pathFormat: "'deleted'",
        durationMs: 3_600_000,
        timestampExtractor: 'Record',
      },
    });
    await w.open([tp]);
    await expect(w.put(records(0, 1, []))).rejects.toMatchObject({
      kind: 'connect',
      message: expect.stringMatching(/folder 'deleted', which tombstone.encoded.partition keeps/),
    });
  });
});
