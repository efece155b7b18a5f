/**
 * End-to-end throughput of the Parquet sink's core (issue 8): 300k CDC SinkRecords
 * with a Connect schema (what JsonConverter + ExtractNewRecordState hand the task)
 * through ParquetSinkWriter (partitioner, schema mapping, column buffers, rotation,
 * encoding, store) into finished files, on the local store and on S3 (s3rver on
 * loopback), next to DuckDB writing the same rows to Parquet from NDJSON in the
 * same run. There is no broker, consumer or converter in this path: this is the
 * writer's ceiling; end-to-end.ts measures the same rows through the runtime.
 * The row formats (format.class JsonFormat and AvroFormat) write the same rows to the
 * local store, next to DuckDB writing them as JSON lines (COPY ... TO 'x.json').
 *
 * Run: npx tsx bench/parquet-sink/sink-throughput.ts [rows]
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_SEMANTIC_TYPES } from '../../connectors/parquet-sink/debezium-types.ts';
import type { FormatSettings } from '../../connectors/parquet-sink/file-format.ts';
import { LocalStore } from '../../connectors/parquet-sink/local-store.ts';
import type { ObjectStore } from '../../connectors/parquet-sink/object-store.ts';
import { S3Store } from '../../connectors/parquet-sink/s3-store.ts';
import { ParquetSinkWriter } from '../../connectors/parquet-sink/sink-writer.ts';
import { ManualClock, Schemas, type SinkRecord } from '../../src/connect/api/index.ts';
import { startS3 } from '../../test/helpers/s3.ts';

const ROWS = Number(process.argv[2] ?? 300_000);
const FLUSH_SIZE = 100_000;
const TOPIC = 'shop.public.orders';
const STATUSES = ['NEW', 'PAID', 'SHIPPED', 'DELIVERED', 'CANCELLED'];
const T0 = Date.UTC(2026, 10, 1);

const schema = Schemas.struct([
  ['id', Schemas.int64()],
  ['customer_id', Schemas.int32()],
  ['status', Schemas.string()],
  ['amount', Schemas.float64()],
  ['note', Schemas.string({ optional: true })],
  ['updated_at', Schemas.timestamp()],
  ['__op', Schemas.string()],
  ['__deleted', Schemas.boolean()],
]);

function records(n: number): SinkRecord[] {
  let s = 0x2545f491;
  const rnd = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, (_, i) => {
    const op = rnd() < 0.7 ? 'c' : rnd() < 0.9 ? 'u' : 'd';
    return {
      topic: TOPIC,
      kafkaPartition: 0,
      kafkaOffset: i,
      timestampType: 'CreateTime',
      timestamp: T0 + i * 37,
      valueSchema: schema,
      value: {
        id: 1_000_000 + i,
        customer_id: Math.floor(rnd() * 50_000),
        status: STATUSES[Math.floor(rnd() * STATUSES.length)],
        amount: Math.round(rnd() * 100_000) / 100,
        note: `note ${Math.floor(rnd() * 1000)}`,
        updated_at: T0 + i * 37,
        __op: op,
        __deleted: op === 'd',
      },
    };
  });
}

function line(name: string, value: number, unit: string): void {
  console.log(`${name}: ${Number.isInteger(value) ? value : value.toFixed(3)} ${unit}`);
}

async function runSink(
  store: ObjectStore,
  input: SinkRecord[],
  format: FormatSettings = { kind: 'parquet' },
): Promise<number> {
  const writer = new ParquetSinkWriter(
    {
      store: { kind: 'local', url: '' },
      topicsDir: 'topics',
      fileDelim: '+',
      dirDelim: '/',
      retryBackoffMs: 5000,
      reportNullsToDlq: true,
      rotateOnPartitionChange: true,
      flushSize: FLUSH_SIZE,
      rotateIntervalMs: -1,
      rotateScheduleIntervalMs: -1,
      codec: 'snappy',
      nullBehavior: 'fail',
      format,
      types: DEFAULT_SEMANTIC_TYPES,
      compatibility: 'NONE',
      padWidth: 10,
      storeKeys: false,
      storeHeaders: false,
      memoryMaxBytes: 512 * 1024 * 1024,
      partitioner: {
        className: 'Default',
        fieldNames: [],
        pathFormat: '',
        durationMs: -1,
        locale: 'en',
        timezone: 'UTC',
        timestampExtractor: 'Record',
        timestampField: '',
      },
    },
    store,
    new ManualClock(T0),
  );
  await writer.open([{ topic: TOPIC, partition: 0 }]);
  const start = performance.now();
  // Batches of 500, as a consumer's fetch would hand them over, with a turn of the
  // event loop between them as a fetch gives: uploads in the background and the
  // encoder thread's replies are I/O callbacks that only run then.
  for (let i = 0; i < input.length; i += 500) {
    await writer.put(input.slice(i, i + 500));
    await new Promise((resolve) => setImmediate(resolve));
  }
  // put() returns before closed files are durable (they encode and upload in the
  // background): the time counts until they are.
  await writer.flushed();
  const ms = performance.now() - start;
  await writer.stop();
  return ms;
}

async function duckdb(dir: string, input: SinkRecord[]): Promise<{ ms: number; bytes: number }> {
  const ndjson = join(dir, 'rows.ndjson');
  writeFileSync(ndjson, `${input.map((r) => JSON.stringify(r.value)).join('\n')}\n`);
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await instance.connect();
  const out = join(dir, 'duckdb.parquet');
  const start = performance.now();
  try {
    await conn.run(
      `COPY (SELECT * FROM read_json('${ndjson}', format='newline_delimited', columns={
        id: 'BIGINT', customer_id: 'INTEGER', status: 'VARCHAR', amount: 'DOUBLE', note: 'VARCHAR',
        updated_at: 'BIGINT', __op: 'VARCHAR', __deleted: 'BOOLEAN'}))
       TO '${out}' (FORMAT parquet, COMPRESSION snappy)`,
    );
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  return { ms: performance.now() - start, bytes: statSync(out).size };
}

/** DuckDB writing the same rows as JSON lines, from a table already loaded. */
async function duckdbJson(
  dir: string,
  input: SinkRecord[],
): Promise<{ ms: number; bytes: number }> {
  const ndjson = join(dir, 'rows-for-json.ndjson');
  writeFileSync(ndjson, `${input.map((r) => JSON.stringify(r.value)).join('\n')}\n`);
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await instance.connect();
  const out = join(dir, 'duckdb.json');
  try {
    await conn.run(
      `CREATE TABLE rows AS SELECT * FROM read_json('${ndjson}', format='newline_delimited', columns={
        id: 'BIGINT', customer_id: 'INTEGER', status: 'VARCHAR', amount: 'DOUBLE', note: 'VARCHAR',
        updated_at: 'BIGINT', __op: 'VARCHAR', __deleted: 'BOOLEAN'})`,
    );
    const start = performance.now();
    await conn.run(`COPY rows TO '${out}' (FORMAT json)`);
    return { ms: performance.now() - start, bytes: statSync(out).size };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  }
  return total;
}

const dir = mkdtempSync(join(tmpdir(), 'sink-throughput-'));
const s3 = await startS3({ buckets: ['bench'] });
try {
  const input = records(ROWS);
  line('rows', ROWS, 'rows');
  await runSink(new LocalStore(pathToFileURL(join(dir, 'warmup')).href), input.slice(0, 20_000));

  const duck = await duckdb(dir, input);
  const duckRate = Math.round((ROWS / duck.ms) * 1000);
  line('duckdb.snappy.rate', duckRate, 'rows/s');
  line('duckdb.snappy.bytes', duck.bytes, 'bytes');

  const localMs = await runSink(new LocalStore(pathToFileURL(join(dir, 'local')).href), input);
  const localRate = Math.round((ROWS / localMs) * 1000);
  const localBytes = folderBytes(join(dir, 'local'));
  line('sink.local.rate', localRate, 'rows/s');
  line('sink.local.bytes', localBytes, 'bytes');
  line('sink.local.rate_vs_duckdb', localRate / duckRate, 'ratio');
  line('sink.local.bytes_vs_duckdb', localBytes / duck.bytes, 'ratio');
  line('sink.local.rate_vs_target_150k', localRate / 150_000, 'ratio');

  const duckJson = await duckdbJson(dir, input);
  const duckJsonRate = Math.round((ROWS / duckJson.ms) * 1000);
  line('duckdb.json.rate', duckJsonRate, 'rows/s');
  line('duckdb.json.bytes', duckJson.bytes, 'bytes');
  const formats: Array<[string, FormatSettings]> = [
    ['json', { kind: 'json', decimalFormat: 'BASE64', compression: 'none', compressionLevel: -1 }],
    ['avro', { kind: 'avro', codec: 'null' }],
    ['avro_snappy', { kind: 'avro', codec: 'snappy' }],
  ];
  for (const [name, format] of formats) {
    const folder = join(dir, `local-${name}`);
    const ms = await runSink(new LocalStore(pathToFileURL(folder).href), input, format);
    const rate = Math.round((ROWS / ms) * 1000);
    line(`sink.local.${name}.rate`, rate, 'rows/s');
    line(`sink.local.${name}.bytes`, folderBytes(folder), 'bytes');
    line(`sink.local.${name}.rate_vs_duckdb_json`, rate / duckJsonRate, 'ratio');
  }

  const s3Store = new S3Store({
    bucket: 'bench',
    region: s3.region,
    endpoint: s3.endpoint,
    pathStyle: true,
    partSize: 5 * 1024 * 1024,
    retries: 3,
    backoffMs: 50,
    credentials: s3.credentials,
  });
  const s3Ms = await runSink(s3Store, input);
  const s3Rate = Math.round((ROWS / s3Ms) * 1000);
  line('sink.s3rver.rate', s3Rate, 'rows/s');
  line('sink.s3rver.rate_vs_duckdb', s3Rate / duckRate, 'ratio');
  line('sink.s3rver.rate_vs_target_150k', s3Rate / 150_000, 'ratio');
} finally {
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
