import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { BEFORE_PLACEHOLDERS_HEADER, type SourceRecord } from '../../../src/connect/api/index.ts';
import { ExtractNewRecordState } from '../../../src/connect/transforms/extract-new-record-state.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { UNAVAILABLE_VALUE } from '../src/table-schema.ts';
import {
  createPayload,
  customersKeySchema,
  customersValueSchema,
  deletePayload,
  updatePayload,
} from './fixtures/debezium-customers.ts';
import { jsonSchema } from './json-schema.ts';
import { type Capture, capture, type Envelope, envelope } from './support.ts';

const cluster = usePostgres();

describe('Debezium change events from the stream (real Postgres)', () => {
  const open: Array<{ c?: Capture; sql?: pg.Client }> = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.c?.stop().catch(() => undefined);
      await o.sql?.end().catch(() => undefined);
    }
  });

  async function setUp(ddl: string, tables: string[], opts?: Parameters<typeof capture>[2]) {
    const db = await cluster().freshDatabase('events');
    const sql = await cluster().client(db);
    open.push({ sql });
    await sql.query(ddl);
    const c = await capture(cluster().connectionConfig(db), tables, opts);
    open.push({ c });
    return { db, sql, c };
  }

  it('matches the documented create, update and delete events of customers field by field', async () => {
    const { db, sql, c } = await setUp(
      `CREATE TABLE customers (id int PRIMARY KEY, first_name varchar(255) NOT NULL,
         last_name varchar(255) NOT NULL, email varchar(255) NOT NULL)`,
      ['customers'],
    );
    await sql.query("INSERT INTO customers VALUES (1, 'Anne', 'Kretchmar', 'annek@noanswer.org')");
    await sql.query("UPDATE customers SET first_name = 'Anne Marie' WHERE id = 1");
    await sql.query('DELETE FROM customers WHERE id = 1');
    await c.transactionsDone(3);
    const [create, update, del, tombstone] = c.records;
    expect(c.records).toHaveLength(4);
    for (const r of [create, update, del]) {
      expect(r.topic).toBe('PostgreSQL_server.public.customers');
      expect(jsonSchema(r.keySchema!)).toEqual(customersKeySchema);
      expect(r.key).toEqual({ id: 1 });
      expect(jsonSchema(r.valueSchema!)).toEqual(customersValueSchema);
      const v = envelope(r);
      expect(v.source.db).toBe(db);
      expect(typeof v.source.version).toBe('string');
      expect(Number.isInteger(v.source.ts_ms)).toBe(true);
      expect(Number.isInteger(v.source.txId)).toBe(true);
      expect(v.source.lsn).toBe(r.sourceOffset.lsn);
      expect(JSON.parse(String(v.source.sequence))).toEqual([
        expect.toSatisfy((x) => x === null || /^\d+$/.test(x)),
        String(v.source.lsn),
      ]);
      expect(v.ts_ms).toBe(1_700_000_000_000);
    }
    const pick = (v: Envelope) => ({
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
    });
    expect(pick(envelope(create))).toEqual(createPayload);
    expect(pick(envelope(update))).toEqual(updatePayload);
    expect(pick(envelope(del))).toEqual(deletePayload);
    // The update's sequence names the create's commit as the previous one.
    expect(JSON.parse(String(envelope(update).source.sequence))[0]).toBe(
      String(c.transactions[0].commitLsn),
    );
    expect(tombstone).toMatchObject({ key: { id: 1 }, value: null, valueSchema: null });
  });

  it('turns a primary key change into delete, tombstone and create', async () => {
    const { sql, c } = await setUp(
      "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')",
      ['t'],
    );
    await sql.query('UPDATE t SET id = 2 WHERE id = 1');
    await c.transactionsDone(1);
    expect(c.records.map((r) => [r.key, (r.value as Envelope | null)?.op ?? null])).toEqual([
      [{ id: 1 }, 'd'],
      [{ id: 1 }, null],
      [{ id: 2 }, 'c'],
    ]);
    expect(envelope(c.records[2]).after).toEqual({ id: 2, v: 'a' });
  });

  it('gives tables without a key a null key, no tombstones, and emits truncates as op t', async () => {
    // Postgres refuses deletes on a published table without replica identity: FULL it is.
    const { sql, c } = await setUp(
      'CREATE TABLE nokey (v int); ALTER TABLE nokey REPLICA IDENTITY FULL',
      ['nokey'],
    );
    await sql.query('INSERT INTO nokey VALUES (1)');
    await sql.query('DELETE FROM nokey');
    await sql.query('INSERT INTO nokey VALUES (2)');
    await sql.query('TRUNCATE nokey');
    await c.transactionsDone(4);
    expect(c.records.map((r) => [r.key, r.keySchema, envelope(r).op])).toEqual([
      [null, null, 'c'],
      [null, null, 'd'],
      [null, null, 'c'],
      [null, null, 't'],
    ]);
    expect(c.records[3].value).toMatchObject({
      before: null,
      after: null,
      source: { table: 'nokey' },
    });
  });

  it('marks TOASTed columns Postgres did not send as unavailable', async () => {
    const { sql, c } = await setUp(
      'CREATE TABLE doc (id int PRIMARY KEY, n int, body text, blob bytea); ALTER TABLE doc ALTER body SET STORAGE EXTERNAL; ALTER TABLE doc ALTER blob SET STORAGE EXTERNAL',
      ['doc'],
    );
    await sql.query(
      "INSERT INTO doc VALUES (1, 0, repeat('x', 10000), decode(repeat('ab', 10000), 'hex'))",
    );
    await sql.query('UPDATE doc SET n = 1');
    await c.transactionsDone(2);
    expect(envelope(c.records[1]).after).toEqual({
      id: 1,
      n: 1,
      body: UNAVAILABLE_VALUE,
      blob: Buffer.from(UNAVAILABLE_VALUE),
    });
  });

  it('follows ALTER TABLE ADD and DROP COLUMN mid-stream', async () => {
    const { sql, c } = await setUp('CREATE TABLE t (id int PRIMARY KEY, a text)', ['t']);
    await sql.query("INSERT INTO t VALUES (1, 'a')");
    await sql.query('ALTER TABLE t ADD COLUMN b int NOT NULL DEFAULT 7');
    await sql.query("INSERT INTO t VALUES (2, 'b', 8)");
    await sql.query('ALTER TABLE t DROP COLUMN a');
    await sql.query('INSERT INTO t VALUES (3, 9)');
    // DDL transactions change no captured row, and pgoutput leaves empty transactions out.
    await c.transactionsDone(3);
    expect(c.records.map((r) => envelope(r).after)).toEqual([
      { id: 1, a: 'a' },
      { id: 2, a: 'b', b: 8 },
      { id: 3, b: 9 },
    ]);
    expect(
      c.records[1].valueSchema?.fields?.[1].schema.fields?.map(
        (f) => `${f.name}:${f.schema.type}:${f.schema.optional}`,
      ),
    ).toEqual(['id:int32:false', 'a:string:true', 'b:int32:false']);
  });

  it('leaves out operations listed in skipped.operations', async () => {
    const { sql, c } = await setUp('CREATE TABLE t (id int PRIMARY KEY)', ['t'], {
      skipped: ['u', 't'],
    });
    await sql.query('INSERT INTO t VALUES (1)');
    await sql.query('UPDATE t SET id = id');
    await sql.query('TRUNCATE t');
    await c.transactionsDone(3);
    expect(c.records.map((r) => envelope(r).op)).toEqual(['c']);
  });

  it('names the NOT NULL columns a key-only delete holds placeholders in, so unwrap rewrites them as null', async () => {
    const { sql, c } = await setUp(
      `CREATE TABLE d (id int PRIMARY KEY, name text NOT NULL, created timestamptz NOT NULL,
         note text);
       CREATE TABLE f (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL);
       ALTER TABLE f REPLICA IDENTITY FULL`,
      ['d', 'f'],
    );
    await sql.query("INSERT INTO d VALUES (1, 'Anne', '2026-11-28 22:30:00+00', 'x')");
    // A whole old row whose values equal the placeholders must keep them.
    await sql.query("INSERT INTO f VALUES (1, '', 0)");
    await sql.query('DELETE FROM d WHERE id = 1');
    await sql.query('DELETE FROM f WHERE id = 1');
    await c.transactionsDone(4);
    const deletes = c.records.filter((r) => r.value !== null && envelope(r).op === 'd');
    expect(deletes).toHaveLength(2);
    const [keyOnly, full] = deletes as [SourceRecord, SourceRecord];
    expect(envelope(keyOnly).before).toEqual({ id: 1, name: '', created: '', note: null });
    expect(keyOnly.headers).toEqual([
      expect.objectContaining({ key: BEFORE_PLACEHOLDERS_HEADER, value: ['name', 'created'] }),
    ]);
    expect(full.headers).toBeUndefined();

    const unwrap = new ExtractNewRecordState();
    unwrap.configure({ 'delete.tombstone.handling.mode': 'rewrite' });
    expect(unwrap.apply(keyOnly)?.value).toEqual({
      id: 1,
      name: null,
      created: null,
      note: null,
      __deleted: true,
    });
    expect(unwrap.apply(full)?.value).toEqual({ id: 1, name: '', qty: 0, __deleted: true });
  });
});
