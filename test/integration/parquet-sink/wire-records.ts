/**
 * Records as they sit in Kafka, in JsonConverter's `{"schema", "payload"}` form: rows
 * of an `orders` table as Debezium change events (envelope with before/after/source/
 * op/ts_ms), and plain JSON rows. Values are deterministic functions of the index, so
 * a test computes the expected counts and sums without keeping the records.
 */
import { createHash } from 'node:crypto';

/** 2026-11-28T22:30:00Z: record times start here, one minute apart. */
export const T0 = Date.UTC(2026, 10, 28, 22, 30);

const rowFields = [
  { field: 'id', type: 'int64', optional: false },
  { field: 'customer', type: 'string', optional: false },
  { field: 'status', type: 'string', optional: true },
  {
    field: 'amount',
    type: 'bytes',
    optional: false,
    name: 'org.apache.kafka.connect.data.Decimal',
    version: 1,
    parameters: { scale: '2', 'connect.decimal.precision': '10' },
  },
  {
    field: 'created_on',
    type: 'int32',
    optional: false,
    name: 'io.debezium.time.Date',
    version: 1,
  },
  {
    field: 'updated_at',
    type: 'int64',
    optional: false,
    name: 'io.debezium.time.MicroTimestamp',
    version: 1,
  },
];

const rowSchema = (optional: boolean, name: string) => ({
  type: 'struct',
  optional,
  name,
  fields: rowFields,
});

const sourceSchema = {
  type: 'struct',
  optional: false,
  name: 'io.debezium.connector.postgresql.Source',
  fields: [
    { field: 'version', type: 'string', optional: false },
    { field: 'connector', type: 'string', optional: false },
    { field: 'name', type: 'string', optional: false },
    { field: 'ts_ms', type: 'int64', optional: false },
    { field: 'db', type: 'string', optional: false },
    { field: 'schema', type: 'string', optional: false },
    { field: 'table', type: 'string', optional: false },
    { field: 'lsn', type: 'int64', optional: true },
  ],
};

export const envelopeSchema = {
  type: 'struct',
  optional: false,
  name: 'shop.public.orders.Envelope',
  version: 2,
  fields: [
    { ...rowSchema(true, 'shop.public.orders.Value'), field: 'before' },
    { ...rowSchema(true, 'shop.public.orders.Value'), field: 'after' },
    { ...sourceSchema, field: 'source' },
    { field: 'op', type: 'string', optional: false },
    { field: 'ts_ms', type: 'int64', optional: true },
  ],
};

const keySchema = {
  type: 'struct',
  optional: false,
  name: 'shop.public.orders.Key',
  fields: [{ field: 'id', type: 'int64', optional: false }],
};

/** Unscaled big-endian two's-complement bytes of an amount in cents, base64 (JSON form). */
function decimalBase64(cents: number): string {
  let v = BigInt(cents);
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  } while (
    !(v === 0n && (bytes[0] as number) < 0x80) &&
    !(v === -1n && (bytes[0] as number) >= 0x80)
  );
  return Buffer.from(bytes).toString('base64');
}

export const STATUSES = ['NEW', 'PAID', 'SHIPPED'];

/** Row i of the orders table: the amount in cents is i * 101 - 500. */
export function orderRow(i: number) {
  return {
    id: 1000 + i,
    customer: `customer-${i % 7}`,
    status: i % 5 === 0 ? null : STATUSES[i % 3],
    amount: decimalBase64(amountCents(i)),
    created_on: 20_000 + (i % 3),
    updated_at: (T0 + i * 60_000) * 1000,
  };
}

export const amountCents = (i: number) => i * 101 - 500;

/** Every 10th event (i % 10 === 9) deletes the row; the others create it. */
export const isDelete = (i: number) => i % 10 === 9;

/** Debezium's change event for row i, with the record time T0 + i minutes. */
export function cdcMessage(i: number, partitions = 1) {
  const row = orderRow(i);
  const del = isDelete(i);
  return {
    key: { schema: keySchema, payload: { id: row.id } },
    value: {
      schema: envelopeSchema,
      payload: {
        before: del ? row : null,
        after: del ? null : row,
        source: {
          version: '2.7.0',
          connector: 'postgresql',
          name: 'shop',
          ts_ms: T0 + i * 60_000,
          db: 'shop',
          schema: 'public',
          table: 'orders',
          lsn: 1000 + i,
        },
        op: del ? 'd' : 'c',
        ts_ms: T0 + i * 60_000 + 5,
      },
    },
    partition: i % partitions,
    timestamp: T0 + i * 60_000,
  };
}

const eventSchema = {
  type: 'struct',
  optional: false,
  name: 'clicks.Value',
  fields: [
    { field: 'user', type: 'string', optional: false },
    { field: 'country', type: 'string', optional: false },
    { field: 'n', type: 'int32', optional: false },
    { field: 'score', type: 'double', optional: false },
    { field: 'ok', type: 'boolean', optional: false },
    {
      field: 'at',
      type: 'int64',
      optional: false,
      name: 'org.apache.kafka.connect.data.Timestamp',
      version: 1,
    },
  ],
};

export const COUNTRIES = ['de', 'fr', 'us'];

/** A plain JSON row with a schema: a click event; `at` is T0 + i seconds. */
export function clickMessage(i: number, partitions = 1) {
  return {
    value: {
      schema: eventSchema,
      payload: {
        user: `user-${i % 13}`,
        country: COUNTRIES[i % 3],
        n: i,
        score: i / 4,
        ok: i % 2 === 0,
        at: T0 + i * 1000,
      },
    },
    partition: i % partitions,
    timestamp: T0 + i * 1000,
  };
}

export const range = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, k) => from + k);

const blobSchema = {
  type: 'struct',
  optional: false,
  name: 'blobs.Value',
  fields: [
    { field: 'id', type: 'int64', optional: false },
    { field: 'body', type: 'string', optional: false },
  ],
};

/**
 * A row with a `body` of `size` characters that compress poorly (hex of a SHA-256
 * chain seeded by i): a few thousand of them make a file larger than s3.part.size.
 */
export function blobMessage(i: number, size = 2000) {
  let body = '';
  let digest = createHash('sha256').update(String(i)).digest();
  while (body.length < size) {
    body += digest.toString('hex');
    digest = createHash('sha256').update(digest).digest();
  }
  return {
    value: { schema: blobSchema, payload: { id: i, body: body.slice(0, size) } },
    timestamp: T0 + i,
  };
}
