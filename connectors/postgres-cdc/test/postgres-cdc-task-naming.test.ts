/**
 * Topic, schema and field names through the whole task against real Postgres, in the
 * snapshot and the stream alike: topic.naming.strategy, topic.delimiter,
 * topic.heartbeat.prefix, the transaction topic, the name adjustment modes, and
 * partitioned tables with and without publish.via.partition.root.
 */
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { envelope, useTaskDatabases } from './support.ts';

const cluster = usePostgres();

/** `<topic> <op> <id>` of the change events, heartbeats and transaction events left out. */
function changes(records: readonly SourceRecord[]): string[] {
  return records
    .filter((r) => r.value !== null && (r.value as { op?: string }).op !== undefined)
    .map((r) => `${r.topic} ${envelope(r).op} ${(envelope(r).after as { id: number }).id}`);
}

describe('topic, schema and field names from the task (real Postgres)', () => {
  const { database, config, newDriver, run } = useTaskDatabases(cluster, 'naming', {
    config: { 'publication.autocreate.mode': 'filtered' },
  });

  it('joins data change, heartbeat and transaction topics with topic.delimiter, snapshot and stream alike', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)',
    );
    const driver = await run(db, {
      'topic.delimiter': '_',
      'topic.heartbeat.prefix': 'beat',
      'topic.transaction': 'tx',
      'provide.transaction.metadata': 'true',
      'heartbeat.interval.ms': '20',
    });
    await driver.pollUntil('the snapshot row', (d) => changes(d).length >= 1);
    await sql.query('INSERT INTO t VALUES (2)');
    const records = await driver.pollUntil('a heartbeat after the insert', (d) => {
      const i = d.findIndex((r) => changes([r]).length === 1 && envelope(r).op === 'c');
      return i >= 0 && d.slice(i).some((r) => r.topic === 'beat_srv');
    });
    expect(changes(records)).toEqual(['srv_public_t r 1', 'srv_public_t c 2']);
    const [read, insert] = records.filter((r) => r.topic === 'srv_public_t');
    for (const r of [read, insert]) {
      expect(r.keySchema?.name).toBe('srv_public_t.Key');
      expect(r.valueSchema?.name).toBe('srv_public_t.Envelope');
      expect(r.valueSchema?.fields?.find((f) => f.name === 'after')?.schema.name).toBe(
        'srv_public_t.Value',
      );
    }
    const boundaries = records.filter((r) => r.topic === 'srv_tx');
    expect(boundaries.map((r) => (r.value as { status: string }).status)).toEqual(['BEGIN', 'END']);
    expect(records.some((r) => r.topic.startsWith('__debezium-heartbeat'))).toBe(false);
  });

  it('keeps logical decoding messages on <topic.prefix>.message whatever the delimiter, as Debezium does', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, { 'topic.delimiter': '_', 'snapshot.mode': 'no_data' });
    await sql.query("SELECT pg_logical_emit_message(false, 'p', 'x')");
    const records = await driver.pollUntil('the message', (d) =>
      d.some((r) => (r.value as { op?: string } | null)?.op === 'm'),
    );
    expect(records.map((r) => r.topic)).toEqual(['srv.message']);
  });

  it('names each table <prefix>.<table> under DefaultTopicNamingStrategy', async () => {
    const { db, sql } = await database(
      'CREATE SCHEMA app; CREATE TABLE app.t (id int PRIMARY KEY); INSERT INTO app.t VALUES (1)',
    );
    const driver = await run(db, {
      'topic.naming.strategy': 'io.debezium.schema.DefaultTopicNamingStrategy',
    });
    await driver.pollUntil('the snapshot row', (d) => changes(d).length >= 1);
    await sql.query('INSERT INTO app.t VALUES (2)');
    const records = await driver.pollUntil('the insert', (d) => changes(d).length >= 2);
    expect(changes(records)).toEqual(['srv.t r 1', 'srv.t c 2']);
    expect(records[0].keySchema?.name).toBe('srv.t.Key');
  });

  it('makes schema and field names valid Avro names under the avro modes, and topics valid Kafka names', async () => {
    const { db, sql } = await database(
      `CREATE TABLE "order lines" (id int PRIMARY KEY, "unit-price" int, "2nd" text);
       INSERT INTO "order lines" VALUES (1, 10, 'a')`,
    );
    const driver = await run(db, {
      'schema.name.adjustment.mode': 'avro',
      'field.name.adjustment.mode': 'avro',
    });
    await driver.pollUntil('the snapshot row', (d) => changes(d).length >= 1);
    await sql.query(`INSERT INTO "order lines" VALUES (2, 20, 'b')`);
    const records = await driver.pollUntil('the insert', (d) => changes(d).length >= 2);
    expect(changes(records)).toEqual(['srv.public.order_lines r 1', 'srv.public.order_lines c 2']);
    const [read, insert] = records;
    for (const r of [read, insert]) {
      expect(r.valueSchema?.name).toBe('srv.public.order_lines.Envelope');
      const after = r.valueSchema?.fields?.find((f) => f.name === 'after')?.schema;
      expect(after?.name).toBe('srv.public.order_lines.Value');
      expect(after?.fields?.map((f) => f.name)).toEqual(['id', 'unit_price', '_2nd']);
    }
    expect(envelope(read).after).toEqual({ id: 1, unit_price: 10, _2nd: 'a' });
    expect(envelope(insert).after).toEqual({ id: 2, unit_price: 20, _2nd: 'b' });
  });

  it('fails the task naming both columns when two become one field under field.name.adjustment.mode', async () => {
    const { db } = await database(
      `CREATE TABLE t (id int PRIMARY KEY, "a-b" int, "a b" int); INSERT INTO t VALUES (1, 2, 3)`,
    );
    const driver = await run(db, { 'field.name.adjustment.mode': 'avro' });
    const error = await driver.pollUntilFailure();
    expect(error.message).toContain(
      "Table public.t: columns 'a-b' and 'a b' both become field 'a_b' under field.name.adjustment.mode",
    );
    expect(changes(driver.delivered)).toEqual([]);
  });

  it('leaves names as they are by default (schema and field names keep their characters)', async () => {
    const { db } = await database(
      `CREATE TABLE "order-lines" (id int PRIMARY KEY, "unit-price" int);
       INSERT INTO "order-lines" VALUES (1, 10)`,
    );
    const driver = await run(db, {});
    const records = await driver.pollUntil('the snapshot row', (d) => changes(d).length >= 1);
    expect(records[0].topic).toBe('srv.public.order-lines');
    expect(records[0].valueSchema?.name).toBe('srv.public.order-lines.Envelope');
    expect(envelope(records[0]).after).toEqual({ id: 1, 'unit-price': 10 });
  });

  it('captures a partitioned table under its own name with publish.via.partition.root, rows of every partition once', async () => {
    const { db, sql } = await database(
      `CREATE TABLE m (id int, region text, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
       CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu');
       CREATE TABLE m_us PARTITION OF m FOR VALUES IN ('us');
       INSERT INTO m VALUES (1, 'eu'), (2, 'us')`,
    );
    const driver = await run(db, {
      'publish.via.partition.root': 'true',
      'table.include.list': 'public.m',
    });
    await driver.pollUntil('the snapshot rows', (d) => changes(d).length >= 2);
    await sql.query(`INSERT INTO m VALUES (3, 'eu'), (4, 'us')`);
    const records = await driver.pollUntil('the inserts', (d) => changes(d).length >= 4);
    expect(changes(records).sort()).toEqual([
      'srv.public.m c 3',
      'srv.public.m c 4',
      'srv.public.m r 1',
      'srv.public.m r 2',
    ]);
    expect(records[0].key).toMatchObject({ id: expect.any(Number), region: expect.any(String) });
    const publication = await sql.query(
      "SELECT pubviaroot FROM pg_publication WHERE pubname = 'dbz_publication'",
    );
    expect(publication.rows).toEqual([{ pubviaroot: true }]);
  });

  it('captures each partition under its own name without publish.via.partition.root, the parent not read again', async () => {
    const { db, sql } = await database(
      `CREATE TABLE m (id int, region text, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
       CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu');
       CREATE TABLE m_us PARTITION OF m FOR VALUES IN ('us');
       INSERT INTO m VALUES (1, 'eu'), (2, 'us')`,
    );
    const driver = await run(db, {});
    await driver.pollUntil('the snapshot rows', (d) => changes(d).length >= 2);
    await sql.query(`INSERT INTO m VALUES (3, 'eu'), (4, 'us')`);
    const records = await driver.pollUntil('the inserts', (d) => changes(d).length >= 4);
    expect(changes(records).sort()).toEqual([
      'srv.public.m_eu c 3',
      'srv.public.m_eu r 1',
      'srv.public.m_us c 4',
      'srv.public.m_us r 2',
    ]);
  });

  it('refuses an existing all_tables publication whose publish_via_partition_root differs', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); CREATE PUBLICATION dbz_publication FOR ALL TABLES',
    );
    await expect(
      newDriver().start(
        config(db, {
          'publication.autocreate.mode': 'all_tables',
          'publish.via.partition.root': 'true',
        }),
      ),
    ).rejects.toThrow(
      "Publication 'dbz_publication' has publish_via_partition_root = false but publish.via.partition.root is true",
    );
    expect((await sql.query('SELECT pubviaroot FROM pg_publication')).rows).toEqual([
      { pubviaroot: false },
    ]);
  });
});
