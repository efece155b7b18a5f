import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { envelope, useTaskDatabases } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

const cluster = usePostgres();

// tsquery, pg_lsn and int4multirange have no mapping in type-mapping.ts (nor in Debezium).
const UNMAPPED = `CREATE TABLE wallet (id int PRIMARY KEY, m tsquery NOT NULL, ip pg_lsn, r int4multirange);
  INSERT INTO wallet VALUES (1, 'fat & rat', '16/B374D848', '{[1,5)}')`;

const NAMED =
  /table public\.wallet, column m \(type tsquery\); table public\.wallet, column ip \(type pg_lsn\); table public\.wallet, column r \(type int4multirange\)\. Set include\.unknown\.datatypes=true /;

const changes = (records: SourceRecord[]) =>
  records.filter((r) => !r.topic.startsWith('__debezium-heartbeat') && r.value !== null);

describe('Postgres CDC columns of types without a mapping (real Postgres)', () => {
  const { cleanups, database, config } = useTaskDatabases(cluster, 'unknown', {
    client: { options: SESSION_OPTIONS },
    config: { 'publication.autocreate.mode': 'filtered' },
  });

  function task(): { task: PostgresCdcSourceTask; driver: TaskDriver } {
    const t = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(t.stop()));
    return { task: t, driver: new TaskDriver(t, new InMemoryOffsets()) };
  }

  it('refuses to start the connector and the task, naming table, column, type and include.unknown.datatypes=true', async () => {
    const { db } = await database(UNMAPPED);
    const connector = new PostgresCdcSourceConnector();

    await expect(connector.start(config(db))).rejects.toThrow(NAMED);
    await expect(task().driver.start(config(db))).rejects.toThrow(NAMED);
  });

  it('does not refuse a column of an unmapped type that column.exclude.list leaves out', async () => {
    const { db } = await database(UNMAPPED);
    const { driver } = task();
    await driver.start(config(db, { 'column.exclude.list': 'public\\.wallet\\.(m|ip|r)' }));
    const records = await driver.pollUntil('the snapshot', (d) => changes(d).length >= 1);
    expect(envelope(changes(records)[0]).after).toEqual({ id: 1 });
  });

  it("with include.unknown.datatypes=true sends them as bytes of Postgres' text form, snapshotted and streamed, optional as the column is", async () => {
    const { db, sql } = await database(UNMAPPED);
    const { driver } = task();
    await driver.start(config(db, { 'include.unknown.datatypes': 'true' }));
    await driver.pollUntil('the snapshot', (d) => changes(d).length >= 1);
    await sql.query("INSERT INTO wallet VALUES (2, 'cat', '0/0', '{}'), (3, 'a | b', NULL, NULL)");
    const records = changes(await driver.pollUntil('the inserts', (d) => changes(d).length >= 3));

    const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('utf8') : v);
    expect(
      records.map((r) => {
        const after = envelope(r).after as Record<string, unknown>;
        return [envelope(r).op, after.id, text(after.m), text(after.ip), text(after.r)];
      }),
    ).toEqual([
      ['r', 1, "'fat' & 'rat'", '16/B374D848', '{[1,5)}'],
      ['c', 2, "'cat'", '0/0', '{}'],
      ['c', 3, "'a' | 'b'", null, null],
    ]);
    expect(Buffer.isBuffer((envelope(records[0]).after as Record<string, unknown>).m)).toBe(true);
    const after = records[1].valueSchema?.fields?.find((f) => f.name === 'after')?.schema;
    expect(after?.fields?.map((f) => [f.name, f.schema.type, f.schema.optional])).toEqual([
      ['id', 'int32', false],
      ['m', 'bytes', false],
      ['ip', 'bytes', true],
      ['r', 'bytes', true],
    ]);
  });

  it('fails the task, naming the column, when a captured table is altered mid-stream to add a column of an unmapped type', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)',
    );
    const { driver } = task();
    await driver.start(config(db));
    await driver.pollUntil('the snapshot', (d) => changes(d).length >= 1);
    await sql.query("ALTER TABLE t ADD COLUMN addr pg_lsn; INSERT INTO t VALUES (2, '0/16B3748')");

    const error = await driver.pollUntilFailure();

    expect(error.message).toMatch(
      /table public\.t, column addr \(type pg_lsn\)\. Set include\.unknown\.datatypes=true /,
    );
    expect(changes(driver.delivered).map((r) => envelope(r).op)).toEqual(['r']);
  });

  it('fails the task when a table created mid-stream has a column of an unmapped type', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const { driver } = task();
    await driver.start(config(db, { 'publication.autocreate.mode': 'all_tables' }));
    await sql.query(
      "CREATE TABLE later (id int PRIMARY KEY, p tsquery); INSERT INTO later VALUES (1, 'a & b')",
    );

    const error = await driver.pollUntilFailure();

    expect(error.message).toMatch(
      /table public\.later, column p \(type tsquery\)\. Set include\.unknown\.datatypes=true /,
    );
    expect(changes(driver.delivered)).toEqual([]);
  });
});
