/**
 * JsonConverter's write path on Debezium-like change events: the string writer
 * (JsonWriter.value, then the envelope head and the text copied into a new Buffer, as
 * fromConnectData did) next to the byte writer (JsonWriter.toBuffer, straight into a
 * shared slab), with schemas on (envelope) and off (bare payload), in the same run.
 *
 * The events: `before`/`after` rows of 11 mixed columns (int32, int64, strings with
 * some non-ASCII and escapes, a Decimal, float32, float64, boolean, Debezium
 * timestamps and dates, an optional text), the Postgres connector's `source` block of
 * 12 fields, `transaction` (null), `op` and `ts_ms`; 1,000 distinct events, cycled.
 * The last 1,000 messages stay referenced, as a producer holds a batch until it is
 * acknowledged, so the collector has the same live set to trace as in a pipeline.
 *
 *   npx tsx bench/connect/json-writer.ts [seconds per case, default 5] [only cases whose name has this]
 *
 * Prints `name: value unit` lines.
 */

import { envelopeSchema } from '../../connectors/postgres-cdc/src/envelope-schema.ts';
import { type Schema, Schemas, unscaledToBytes } from '../../src/connect/api/index.ts';
import { JsonWriter } from '../../src/connect/converters/json-writer.ts';

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = 7;
const ONLY = process.argv[3] ?? '';
const EVENTS = 1000;
const KEPT = 1000;

const row = Schemas.struct(
  [
    ['id', Schemas.int32()],
    ['customer_id', Schemas.int64()],
    ['name', Schemas.string()],
    ['email', Schemas.string({ optional: true })],
    ['price', Schemas.decimal(2)],
    ['weight', Schemas.float32({ optional: true })],
    ['score', Schemas.float64({ optional: true })],
    ['active', Schemas.boolean()],
    ['created_at', Schemas.int64({ name: 'io.debezium.time.MicroTimestamp', version: 1 })],
    ['birth_date', Schemas.int32({ optional: true, name: 'io.debezium.time.Date', version: 1 })],
    ['notes', Schemas.string({ optional: true })],
  ],
  { name: 'bench.public.customers.Value', optional: true },
);

// The Postgres connector's own envelope, so the bench writes exactly its events' shape.
const envelope: Schema = envelopeSchema('bench.public.customers', row);

const NAMES = ['Anne', 'Zoë', 'Björn', 'Søren', 'Li Wei', 'José', 'Sally "Sal"', 'Émile'];

/** A row as a compiled row reader builds it: one object literal, one hidden class. */
function rowValue(i: number): Record<string, unknown> {
  return {
    id: i,
    customer_id: 1_000_000_000 + i * 7919,
    name: `${NAMES[i % NAMES.length]} Kretchmar-${i}`,
    email: i % 5 === 0 ? null : `customer${i}@example.com`,
    price: unscaledToBytes(BigInt(i * 1999 + 5)),
    weight: i % 3 === 0 ? null : 0.25 + i / 8,
    score: i / 7,
    active: i % 2 === 0,
    created_at: 1_700_000_000_000_000 + i * 1_000_003,
    birth_date: 7000 + (i % 9000),
    notes: i % 4 === 0 ? null : `note ${i}: line one\nline two\t"quoted" €${i}`,
  };
}

function event(i: number): Record<string, unknown> {
  const lsn = 24_000_000 + i * 312;
  return {
    before: i % 3 === 1 ? rowValue(i + 1) : null,
    after: rowValue(i),
    source: {
      version: '2.7.0.Final',
      connector: 'postgresql',
      name: 'bench',
      ts_ms: 1_700_000_000_000 + i,
      snapshot: i % 10 === 0 ? null : 'false',
      db: 'inventory',
      sequence: `["${lsn - 312}","${lsn}"]`,
      schema: 'public',
      table: 'customers',
      txId: 780 + i,
      lsn,
      xmin: null,
    },
    transaction: null,
    op: i % 3 === 1 ? 'u' : 'c',
    ts_ms: 1_700_000_000_100 + i,
  };
}

const events = Array.from({ length: EVENTS }, (_, i) => event(i));
const writer = new JsonWriter({ decimalFormat: 'BASE64', replaceNullWithDefault: true });
const head = Buffer.from(`{"schema":${writer.schemaJson(envelope)},"payload":`, 'utf8');
const kept: Buffer[] = new Array(KEPT);

/** fromConnectData before the byte writer: the text, then a Buffer holding head + text. */
function stringPath(value: unknown, withSchema: boolean): Buffer {
  const payload = writer.value(envelope, value);
  if (!withSchema) return Buffer.from(payload, 'utf8');
  const size = head.length + Buffer.byteLength(payload, 'utf8') + 1;
  const out = Buffer.allocUnsafe(size);
  head.copy(out, 0);
  out.write(payload, head.length, 'utf8');
  out[size - 1] = 0x7d;
  return out;
}

function bytePath(value: unknown, withSchema: boolean): Buffer {
  return writer.toBuffer(envelope, value, withSchema ? head : null);
}

interface Case {
  name: string;
  write: (value: unknown) => Buffer;
  /** Rows per second of each round. */
  rates: number[];
  bytesPerRow: number;
}

/** One round of a case: rows written in `ms` milliseconds (after a warm-up pass). */
function round(c: Case, ms: number): void {
  let rows = 0;
  let bytes = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 1000; i++) {
      const out = c.write(events[(rows + i) % EVENTS]);
      bytes += out.length;
      kept[(rows + i) % KEPT] = out;
    }
    rows += 1000;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  c.rates.push((rows * 1000) / elapsed);
  c.bytesPerRow = bytes / rows;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

for (let i = 0; i < EVENTS; i++) {
  for (const withSchema of [false, true]) {
    if (!stringPath(events[i], withSchema).equals(bytePath(events[i], withSchema))) {
      throw new Error(`event ${i}: the two paths wrote different bytes`);
    }
  }
}

const cases: Case[] = (
  [
    { name: 'string writer, schemas off', write: (v) => stringPath(v, false) },
    { name: 'byte writer, schemas off', write: (v) => bytePath(v, false) },
    { name: 'string writer, schemas on', write: (v) => stringPath(v, true) },
    { name: 'byte writer, schemas on', write: (v) => bytePath(v, true) },
  ] satisfies Array<Pick<Case, 'name' | 'write'>>
)
  .filter((c) => c.name.includes(ONLY))
  .map((c) => ({ ...c, rates: [], bytesPerRow: 0 }));

// Rounds interleave the cases, and each reports its median round, so that a burst of
// load from elsewhere on the machine skews one round of each rather than one case.
for (const c of cases) round(c, 300);
for (const c of cases) c.rates.length = 0;
for (let r = 0; r < ROUNDS; r++) for (const c of cases) round(c, (SECONDS * 1000) / ROUNDS);
for (const c of cases) {
  const rate = median(c.rates);
  console.log(`${c.name} rows: ${Math.round(rate)} rows/s`);
  console.log(`${c.name} bytes: ${((rate * c.bytesPerRow) / 1e6).toFixed(1)} MB/s`);
  console.log(`${c.name} size: ${Math.round(c.bytesPerRow)} bytes/row`);
}
