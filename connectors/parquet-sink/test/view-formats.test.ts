/**
 * store.kafka.keys / store.kafka.headers in keys.format.class / headers.format.class
 * AvroFormat and JsonFormat (record-views.ts): a sink task writes the keys and headers
 * files beside the value files, named as Confluent names them (`.keys.avro`,
 * `.headers.json`), row-aligned with them; Avro read back with Apache Avro's Python
 * reader, JSON with DuckDB.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  parseConfig,
  Schemas,
  type SinkRecord,
  type TopicPartition,
} from '../../../src/connect/api/index.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { parquetSinkConfigDefs, validateSinkConfig } from '../config.ts';
import { ParquetSinkTask } from '../parquet-sink-task.ts';
import { query } from './duckdb.ts';
import { sinkRecord, taskContext } from './fixtures.ts';

const TOPIC = 'orders';
const partitions: TopicPartition[] = [{ topic: TOPIC, partition: 0 }];

let dir: string;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const valueSchema = Schemas.struct([['v', Schemas.int32()]], { name: 'orders.Value' });
const keySchema = Schemas.struct([['id', Schemas.int32()]], { name: 'orders.Key' });

function records(n: number): SinkRecord[] {
  return Array.from({ length: n }, (_, i) =>
    sinkRecord(
      TOPIC,
      0,
      i,
      { v: i },
      {
        valueSchema,
        key: { id: 100 + i },
        keySchema,
        headers: [
          { key: 'trace', value: `t${i}` },
          { key: 'n', value: i },
        ],
      },
    ),
  );
}

async function writeAll(config: Record<string, string>, input: SinkRecord[]): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'view-formats-'));
  const t = new ParquetSinkTask();
  cleanups.push(() => t.stop());
  await t.start(
    {
      'store.url': pathToFileURL(dir).href,
      'flush.size': String(Math.min(3, input.length)),
      ...config,
    },
    taskContext(partitions),
  );
  await t.open(partitions);
  await t.put(input);
  const next = input.length;
  await waitFor(`offset ${next} to be durable`, async () => {
    const [o] = await t.preCommit([{ topic: TOPIC, partition: 0, offset: next }]);
    return o?.offset === next ? o : undefined;
  });
  return join(dir, 'topics', TOPIC, 'partition=0');
}

function files(folder: string): string[] {
  return readdirSync(folder)
    .filter((f) => !f.startsWith('.'))
    .sort();
}

/** Records of an Avro container file, as Apache Avro's Python reader (python3-avro) reads them. */
function readWithApacheAvro(path: string): unknown[] {
  const script = `
import json, sys
from avro.datafile import DataFileReader
from avro.io import DatumReader
with open(sys.argv[1], 'rb') as f:
    print(json.dumps(list(DataFileReader(f, DatumReader()))))
`;
  const out = spawnSync('/usr/bin/python3', ['-c', script, path], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`Apache Avro's Python reader failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

const HEADERS_OF = (i: number) => [
  { key: 'trace', value: `t${i}` },
  { key: 'n', value: String(i) },
];

describe('keys and headers files in AvroFormat', () => {
  it("with Avro values and Confluent's default keys/headers format, writes .keys.avro and .headers.avro row-aligned with the values", async () => {
    const folder = await writeAll(
      {
        'format.class': 'AvroFormat',
        'store.kafka.keys': 'true',
        'store.kafka.headers': 'true',
      },
      records(6),
    );

    expect(files(folder)).toEqual([
      'orders+0+0000000000.avro',
      'orders+0+0000000000.headers.avro',
      'orders+0+0000000000.keys.avro',
      'orders+0+0000000003.avro',
      'orders+0+0000000003.headers.avro',
      'orders+0+0000000003.keys.avro',
    ]);
    const values = readWithApacheAvro(join(folder, 'orders+0+0000000003.avro'));
    const keys = readWithApacheAvro(join(folder, 'orders+0+0000000003.keys.avro'));
    const headers = readWithApacheAvro(join(folder, 'orders+0+0000000003.headers.avro'));
    // Unenveloped, as Confluent's Avro writer asks KeyRecordView/HeaderRecordView for them.
    expect(values).toEqual([{ v: 3 }, { v: 4 }, { v: 5 }]);
    expect(keys).toEqual([{ id: 103 }, { id: 104 }, { id: 105 }]);
    expect(headers).toEqual([HEADERS_OF(3), HEADERS_OF(4), HEADERS_OF(5)]);
  });

  it('with Parquet values, names the Avro keys and headers files after their own format', async () => {
    const folder = await writeAll(
      {
        'store.kafka.keys': 'true',
        'store.kafka.headers': 'true',
        'keys.format.class': 'io.confluent.connect.s3.format.avro.AvroFormat',
      },
      records(2),
    );

    expect(files(folder)).toEqual([
      'orders+0+0000000000.headers.avro',
      'orders+0+0000000000.keys.avro',
      'orders+0+0000000000.snappy.parquet',
    ]);
    const [values] = await query(
      `SELECT list(v ORDER BY v) AS v FROM read_parquet('${folder}/orders+0+0000000000.snappy.parquet')`,
    );
    expect(values).toEqual({ v: [0, 1] });
    expect(readWithApacheAvro(join(folder, 'orders+0+0000000000.keys.avro'))).toEqual([
      { id: 100 },
      { id: 101 },
    ]);
    expect(readWithApacheAvro(join(folder, 'orders+0+0000000000.headers.avro'))).toEqual([
      HEADERS_OF(0),
      HEADERS_OF(1),
    ]);
  });
});

describe('keys files of primitive keys and tombstones in AvroFormat', () => {
  it('writes a string key under its own schema, and with behavior.on.null.values=write the keys of null values in the tombstone folder', async () => {
    const input = records(3).map((r) => ({
      ...r,
      key: `k${r.kafkaOffset}`,
      keySchema: Schemas.string(),
      ...(r.kafkaOffset === 1 ? { value: null, valueSchema: null } : {}),
    }));
    const folder = await writeAll(
      {
        'format.class': 'AvroFormat',
        'store.kafka.keys': 'true',
        'behavior.on.null.values': 'write',
        'tombstone.encoded.partition': 'tombstones',
      },
      input,
    );

    expect(files(folder)).toEqual(['orders+0+0000000000.avro', 'orders+0+0000000000.keys.avro']);
    expect(readWithApacheAvro(join(folder, 'orders+0+0000000000.keys.avro'))).toEqual(['k0', 'k2']);
    const tombstones = join(dir, 'topics', TOPIC, 'tombstones');
    expect(files(tombstones)).toEqual(['orders+0+0000000001.keys.avro']);
    expect(readWithApacheAvro(join(tombstones, 'orders+0+0000000001.keys.avro'))).toEqual(['k1']);
  });
});

describe('keys and headers files in JsonFormat', () => {
  it('with JSON values, writes .keys.json and .headers.json, one key and one header array a line, that DuckDB reads back', async () => {
    const folder = await writeAll(
      {
        'format.class': 'JsonFormat',
        'store.kafka.keys': 'true',
        'store.kafka.headers': 'true',
        'keys.format.class': 'JsonFormat',
        'headers.format.class': 'io.confluent.connect.s3.format.json.JsonFormat',
      },
      records(3),
    );

    expect(files(folder)).toEqual([
      'orders+0+0000000000.headers.json',
      'orders+0+0000000000.json',
      'orders+0+0000000000.keys.json',
    ]);
    const keys = await query(
      `SELECT id FROM read_ndjson('${folder}/orders+0+0000000000.keys.json')`,
    );
    expect(keys).toEqual([{ id: 100n }, { id: 101n }, { id: 102n }]);
    const headers = await query(
      `SELECT json AS h FROM read_ndjson_objects('${folder}/orders+0+0000000000.headers.json')`,
    );
    expect(headers.map((r) => JSON.parse(String(r.h)))).toEqual([
      HEADERS_OF(0),
      HEADERS_OF(1),
      HEADERS_OF(2),
    ]);
  });

  it('with Avro values, writes a schemaless key as it is in .keys.json', async () => {
    const input = records(2).map((r) => ({ ...r, key: `k${r.kafkaOffset}`, keySchema: null }));
    const folder = await writeAll(
      {
        'format.class': 'AvroFormat',
        'store.kafka.keys': 'true',
        'keys.format.class': 'JsonFormat',
      },
      input,
    );

    expect(files(folder)).toEqual(['orders+0+0000000000.avro', 'orders+0+0000000000.keys.json']);
    const keys = await query(
      `SELECT json AS k FROM read_ndjson_objects('${folder}/orders+0+0000000000.keys.json')`,
    );
    expect(keys.map((r) => JSON.parse(String(r.k)))).toEqual(['k0', 'k1']);
  });
});

describe('keys.format.class / headers.format.class validation', () => {
  function validate(config: Record<string, string>): Record<string, string[]> {
    const parsed = parseConfig(parquetSinkConfigDefs, {
      'store.url': 'file:///tmp/lake',
      'flush.size': '10',
      ...config,
    });
    const out: Record<string, string[]> = {};
    for (const e of [...parsed.errors, ...validateSinkConfig(parsed.values)]) {
      out[e.key] = [...(out[e.key] ?? []), e.message];
    }
    return out;
  }

  it.each([
    ['keys.format.class', 'io.confluent.connect.s3.format.bytearray.ByteArrayFormat'],
    ['headers.format.class', 'io.confluent.connect.s3.format.csv.CsvFormat'],
  ])('%s=%s is refused by name', (key, value) => {
    expect((validate({ [key]: value })[key] ?? []).join(' ')).toContain(
      `not supported: ${key}=${value}`,
    );
  });

  it('behavior.on.null.values=write with keys files of another format than the values is refused by name', () => {
    const messages = validate({
      'store.kafka.keys': 'true',
      'behavior.on.null.values': 'write',
    })['keys.format.class'];

    expect((messages ?? []).join(' ')).toContain(
      'not supported: keys.format.class=io.confluent.connect.s3.format.avro.AvroFormat with behavior.on.null.values=write and format.class=io.confluent.connect.s3.format.parquet.ParquetFormat',
    );
  });

  it.each(['AvroFormat', 'JsonFormat', 'ByteArrayFormat', 'ParquetFormat'])(
    "store.kafka.keys/headers with format.class=%s and Confluent's default AvroFormat views pass",
    (format) => {
      expect(
        validate({
          'format.class': format,
          'store.kafka.keys': 'true',
          'store.kafka.headers': 'true',
        }),
      ).toEqual({});
    },
  );
});
