/**
 * The CDC source through `connect standalone` (child process, embedded broker): the
 * snapshot of existing rows, then inserts, updates and deletes across tables and
 * transactions, land in compacted `<prefix>.<schema>.<table>` topics as Debezium's
 * JsonConverter output, with and without schemas; read back with kafkajs and compared
 * field by field with the connector's Debezium fixtures. After the broker's cleaner
 * has run, a consumer reading from the start (kcat: see readTopicWithKcat for why not
 * kafkajs there) sees exactly the live rows.
 */
import { describe, expect, it } from 'vitest';
import {
  createPayload,
  customersKeySchema,
  customersValueSchema,
  deletePayload,
  updatePayload,
} from '../../../connectors/postgres-cdc/test/fixtures/debezium-customers.ts';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  endOffset,
  readTopic,
  readTopicWithKcat,
  startCdcWorker,
  type TopicRecord,
  useAdmin,
  waitFor,
} from './cdc-worker.ts';

const cluster = usePostgres();
const CUSTOMERS = 'PostgreSQL_server.public.customers';
const ORDERS = 'PostgreSQL_server.public.orders';

const SCHEMA_DDL = `
  CREATE TABLE customers (id int PRIMARY KEY, first_name varchar(255) NOT NULL,
    last_name varchar(255) NOT NULL, email varchar(255) NOT NULL);
  CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, quantity int NOT NULL);
  INSERT INTO customers VALUES
    (1001, 'Sally', 'Thomas', 'sally.thomas@acme.com'),
    (1002, 'George', 'Bailey', 'gbailey@foobar.com'),
    (1003, 'Edward', 'Walker', 'ed@walker.com');
  INSERT INTO orders VALUES (10001, 1001, 1), (10002, 1002, 2);`;

/** Creates, updates and deletes in three transactions spanning both tables. */
async function changeRows(sql: import('pg').Client): Promise<void> {
  await sql.query('BEGIN');
  await sql.query("INSERT INTO customers VALUES (1, 'Anne', 'Kretchmar', 'annek@noanswer.org')");
  await sql.query('INSERT INTO orders VALUES (10003, 1, 5)');
  await sql.query('COMMIT');
  await sql.query('BEGIN');
  await sql.query("UPDATE customers SET first_name = 'Anne Marie' WHERE id = 1");
  await sql.query('UPDATE orders SET quantity = 6 WHERE id = 10003');
  await sql.query('COMMIT');
  await sql.query('BEGIN');
  await sql.query('DELETE FROM orders WHERE customer_id = 1');
  await sql.query('DELETE FROM orders WHERE customer_id = 1002');
  await sql.query('DELETE FROM customers WHERE id = 1');
  await sql.query('DELETE FROM customers WHERE id = 1002');
  await sql.query('COMMIT');
}

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON checked field by field
type Json = any;
const parse = (s: string | null): Json => (s === null ? null : JSON.parse(s));

/** The fields the fixtures fix (the rest depend on the run and are checked by kind). */
function pick(v: Json) {
  return {
    before: v.before,
    after: v.after,
    op: v.op,
    transaction: v.transaction,
    source: {
      connector: v.source.connector,
      name: v.source.name,
      snapshot: v.source.snapshot,
      schema: v.source.schema,
      table: v.source.table,
      xmin: v.source.xmin,
    },
  };
}

async function waitForRecords(bootstrap: string, topic: string, n: number) {
  const admin = await useAdmin(bootstrap);
  await waitFor(
    `${n} records in ${topic}`,
    async () => ((await endOffset(admin, topic)) ?? 0) >= n || undefined,
    60_000,
  );
  return readTopic(bootstrap, topic);
}

describe('Postgres CDC through a standalone worker (JsonConverter)', () => {
  it('snapshots, then streams creates, updates, deletes and tombstones as Debezium does, with schemas', async () => {
    const db = await cluster().freshDatabase('e2e');
    const sql = await cluster().client(db);
    sql.on('error', () => undefined);
    try {
      await sql.query(SCHEMA_DDL);
      const worker = await startCdcWorker(
        useTmpDir(),
        'inventory',
        cdcConnectorConfig(cluster(), db, {
          'table.include.list': 'public.customers,public.orders',
        }),
      );
      const snapshot = await waitForRecords(worker.bootstrap, CUSTOMERS, 3);
      expect(snapshot.map((r) => parse(r.value).payload.op)).toEqual(['r', 'r', 'r']);
      await changeRows(sql);
      // 3 snapshot + create + update + 2 × (delete + tombstone)
      const customers = await waitForRecords(worker.bootstrap, CUSTOMERS, 9);
      const orders = await waitForRecords(worker.bootstrap, ORDERS, 8);

      const admin = await useAdmin(worker.bootstrap);
      const configs = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name: CUSTOMERS, configNames: ['cleanup.policy'] }],
      });
      expect(configs.resources[0].configEntries[0].configValue).toBe('compact');

      const keys = customers.map((r) => parse(r.key));
      for (const k of keys) expect(k.schema).toEqual(customersKeySchema);
      expect(keys.map((k) => k.payload)).toEqual(
        [1001, 1002, 1003, 1, 1, 1, 1, 1002, 1002].map((id) => ({ id })),
      );
      const values = customers.map((r) => parse(r.value));
      expect(values.map((v) => v?.payload.op ?? null)).toEqual([
        'r',
        'r',
        'r',
        'c',
        'u',
        'd',
        null,
        'd',
        null,
      ]);
      for (const v of values.filter((x) => x !== null)) {
        expect(v.schema).toEqual(customersValueSchema);
        expect(v.payload.source.db).toBe(db);
        expect(typeof v.payload.source.version).toBe('string');
        expect(Number.isInteger(v.payload.source.ts_ms)).toBe(true);
        expect(Number.isInteger(v.payload.ts_ms)).toBe(true);
      }
      expect(values.slice(0, 3).map((v) => v.payload.source.snapshot)).toEqual([
        'first',
        'true',
        // The last snapshot row of the last table is orders'.
        'last_in_data_collection',
      ]);
      expect(values[0].payload.after).toEqual({
        id: 1001,
        first_name: 'Sally',
        last_name: 'Thomas',
        email: 'sally.thomas@acme.com',
      });
      expect(pick(values[3].payload)).toEqual({
        ...createPayload,
        source: { ...createPayload.source },
      });
      expect(pick(values[4].payload)).toEqual(updatePayload);
      expect(pick(values[5].payload)).toEqual(deletePayload);
      for (const v of values.slice(3).filter((x) => x !== null)) {
        expect(Number.isInteger(v.payload.source.txId)).toBe(true);
        expect(Number.isInteger(v.payload.source.lsn)).toBe(true);
      }
      // The create and the update of transactions 1 and 2 carry their own txId and LSN order.
      expect(values[4].payload.source.lsn).toBeGreaterThan(values[3].payload.source.lsn);
      expect(values[4].payload.source.txId).toBeGreaterThan(values[3].payload.source.txId);

      const orderValues = orders.map((r) => parse(r.value)?.payload ?? null);
      expect(orderValues.map((v) => v?.op ?? null)).toEqual([
        'r',
        'r',
        'c',
        'u',
        'd',
        null,
        'd',
        null,
      ]);
      expect(orderValues[1].source.snapshot).toBe('last');
      expect(orderValues[3].after).toEqual({ id: 10003, customer_id: 1, quantity: 6 });
      // One transaction's changes share its txId across tables.
      expect(orderValues[2].source.txId).toBe(values[3].payload.source.txId);
    } finally {
      await sql.end();
    }
  });

  it('writes the same events without schemas (schemas.enable=false), and a blocking snapshot signal reads rows again between streamed changes', async () => {
    const db = await cluster().freshDatabase('e2e');
    const sql = await cluster().client(db);
    sql.on('error', () => undefined);
    try {
      await sql.query(SCHEMA_DDL);
      await sql.query(
        'CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))',
      );
      const worker = await startCdcWorker(
        useTmpDir(),
        'inventory',
        cdcConnectorConfig(cluster(), db, {
          'table.include.list': 'public.customers',
          'signal.data.collection': 'public.debezium_signal',
        }),
        {
          worker: {
            'key.converter.schemas.enable': 'false',
            'value.converter.schemas.enable': 'false',
          },
        },
      );
      await waitForRecords(worker.bootstrap, CUSTOMERS, 3);
      await changeRows(sql);
      const customers = await waitForRecords(worker.bootstrap, CUSTOMERS, 9);
      expect(customers.map((r) => parse(r.key))).toEqual(
        [1001, 1002, 1003, 1, 1, 1, 1, 1002, 1002].map((id) => ({ id })),
      );
      const values = customers.map((r) => parse(r.value));
      expect(values[0]).toMatchObject({ op: 'r', source: { snapshot: 'first' } });
      expect(values[2]).toMatchObject({ op: 'r', source: { snapshot: 'last' } });
      expect(Object.keys(values[3]).sort()).toEqual(
        ['after', 'before', 'op', 'source', 'transaction', 'ts_ms'].sort(),
      );
      expect(pick(values[3])).toEqual(createPayload);
      expect(pick(values[4])).toEqual(updatePayload);
      expect(pick(values[5])).toEqual(deletePayload);
      expect(values[6]).toBeNull();

      // The blocking snapshot's read of the one row its condition selects comes before
      // the change committed after the signal (which it may already see: it reads the
      // table as of its own start, after the signal).
      await sql.query(
        `INSERT INTO debezium_signal VALUES ('b-1', 'execute-snapshot', '{"type": "blocking", "data-collections": ["public.customers"], "additional-conditions": [{"data-collection": "public.customers", "filter": "id = 1003"}]}')`,
      );
      await sql.query("UPDATE customers SET email = 'edward@walker.com' WHERE id = 1003");
      const again = (await waitForRecords(worker.bootstrap, CUSTOMERS, 11)).map((r) =>
        parse(r.value),
      );
      expect(again.slice(9)).toMatchObject([
        { op: 'r', after: { id: 1003 }, source: { snapshot: 'last' } },
        { op: 'u', after: { id: 1003, email: 'edward@walker.com' } },
      ]);
    } finally {
      await sql.end();
    }
  });

  it('leaves exactly the live rows in a compacted topic once the cleaner has run', async () => {
    const db = await cluster().freshDatabase('e2e');
    const sql = await cluster().client(db);
    sql.on('error', () => undefined);
    try {
      await sql.query(SCHEMA_DDL);
      const worker = await startCdcWorker(
        useTmpDir(),
        'inventory',
        cdcConnectorConfig(cluster(), db, {
          'table.include.list': 'public.customers',
          // A new segment for (almost) every produce, so the changes leave the active
          // segment, which is never cleaned; no delete retention so the cleaner drops
          // the tombstones too.
          'topic.creation.default.segment.ms': '1',
          'topic.creation.default.delete.retention.ms': '0',
          'topic.creation.default.min.cleanable.dirty.ratio': '0.01',
        }),
      );
      await waitForRecords(worker.bootstrap, CUSTOMERS, 3);
      await changeRows(sql);
      await waitForRecords(worker.bootstrap, CUSTOMERS, 9);
      // A last insert, so the final tombstone is in an inactive segment as well.
      await sql.query("INSERT INTO customers VALUES (7, 'Last', 'Row', 'last@row.org')");
      await waitForRecords(worker.bootstrap, CUSTOMERS, 10);
      const live = (await sql.query('SELECT id FROM customers ORDER BY id')).rows.map((r) => r.id);
      expect(live).toEqual([7, 1001, 1003]);
      const compacted = await waitFor(
        'the cleaner to leave one record per live row',
        async () => {
          const records = await readTopicWithKcat(worker.bootstrap, CUSTOMERS);
          return records.length === live.length ? records : undefined;
        },
        60_000,
      );
      const seen = compacted.map((r: TopicRecord) => {
        const value = parse(r.value);
        return { id: parse(r.key).payload.id, after: value?.payload.after ?? null };
      });
      const rows = (await sql.query('SELECT * FROM customers')).rows;
      expect(seen.sort((a, b) => a.id - b.id)).toEqual(
        rows.map((after) => ({ id: after.id, after })).sort((a, b) => a.id - b.id),
      );
    } finally {
      await sql.end();
    }
  });
});
