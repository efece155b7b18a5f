/**
 * The connector class on its own: validate() refuses a slot another connector of the
 * cluster uses on the same server; deleted() drops the slot and the publication with
 * slot.drop.on.delete, and otherwise says at WARN that they remain, how much WAL the
 * slot holds and the SQL that drops them; alterOffsets() drops the slot on a reset.
 */
import { Writable } from 'node:stream';
import type pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type ConnectorConfig,
  parseConfig,
  type ValidationContext,
} from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { postgresCdcConfigDefs } from '../src/connector-config.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';
import { holdSlot } from './support.ts';

const cluster = usePostgres();

const base: ConnectorConfig = {
  'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
  'database.hostname': 'db.example',
  'database.port': '5432',
  'database.user': 'u',
  'database.dbname': 'inventory',
  'topic.prefix': 'one',
};

function validate(config: ConnectorConfig, others: Record<string, ConnectorConfig>) {
  const parsed = parseConfig(postgresCdcConfigDefs, config);
  expect(parsed.errors).toEqual([]);
  const context: ValidationContext = {
    connectorName: 'second',
    otherConnectors: Object.entries(others).map(([name, c]) => ({ name, config: c })),
  };
  return new PostgresCdcSourceConnector().validate(parsed.values, context);
}

describe('validate: one replication slot, one connector', () => {
  it("refuses a slot.name another connector uses on the same server, naming it (both on Debezium's default)", () => {
    const errors = validate({ ...base, 'topic.prefix': 'two' }, { first: base });
    expect(errors).toHaveLength(1);
    expect(errors[0].key).toBe('slot.name');
    expect(errors[0].value).toBe('debezium');
    expect(errors[0].message).toMatch(/connector 'first'/);
    expect(errors[0].message).toMatch(/db\.example:5432/);
  });

  it('refuses the same slot on another database of the same server too: slot names are per server', () => {
    const errors = validate(
      { ...base, 'slot.name': 's1' },
      { first: { ...base, 'database.dbname': 'other', 'slot.name': 's1' } },
    );
    expect(errors.map((e) => e.key)).toEqual(['slot.name']);
  });

  it('accepts another slot name, another server, and connectors of other classes', () => {
    expect(
      validate(
        { ...base, 'slot.name': 's2' },
        {
          first: { ...base, 'slot.name': 's1' },
          elsewhere: { ...base, 'database.hostname': 'db2.example', 'slot.name': 's2' },
          otherPort: { ...base, 'database.port': '5433', 'slot.name': 's2' },
          sink: { 'connector.class': 'FileStreamSink', 'slot.name': 's2' },
        },
      ),
    ).toEqual([]);
  });
});

describe('deleted(): the slot and publication a deleted connector leaves (real Postgres)', () => {
  async function setUp(extra: Record<string, string>) {
    const db = await cluster().freshDatabase('deleted');
    const sql = await cluster().client(db);
    onTestFinished(() => sql.end());
    await sql.query(`CREATE TABLE t (id int PRIMARY KEY); CREATE PUBLICATION ${db} FOR TABLE t`);
    await sql.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [db]);
    // WAL the slot has to keep: what the warning reports.
    await sql.query('INSERT INTO t SELECT generate_series(1, 10000)');
    const c = cluster();
    const config: ConnectorConfig = {
      name: 'leaving',
      'database.hostname': c.host,
      'database.port': String(c.port),
      'database.user': c.user,
      'database.password': c.password,
      'database.dbname': db,
      'topic.prefix': 'srv',
      'slot.name': db,
      'publication.name': db,
      'publication.autocreate.mode': 'filtered',
      ...extra,
    };
    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    return { db, sql, config, lines, connector: new PostgresCdcSourceConnector({ log }) };
  }

  const exists = async (sql: pg.Client, table: string, column: string, name: string) =>
    (await sql.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [name])).rowCount === 1;

  it('leaves both by default and warns with the retained WAL and the SQL that drops them', async () => {
    const { db, sql, config, lines, connector } = await setUp({});

    await connector.deleted(config);

    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(true);
    expect(await exists(sql, 'pg_publication', 'pubname', db)).toBe(true);
    const warn = lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatch(/connector 'leaving' was deleted/);
    expect(warn[0]).toMatch(/retains \d+ (bytes|kB|MB) of WAL/);
    expect(warn[0]).toContain(`SELECT pg_drop_replication_slot('${db}');`);
    expect(warn[0]).toContain(`DROP PUBLICATION "${db}";`);
    expect(warn[0]).toMatch(/slot\.drop\.on\.delete=true/);
  });

  it('drops both with slot.drop.on.delete=true, waiting for the task that still holds the slot to let go', async () => {
    const { db, sql, config, connector } = await setUp({ 'slot.drop.on.delete': 'true' });
    const task = await holdSlot(cluster().connectionConfig(db), db, 'stopping-task', db);

    const deleting = connector.deleted(config);
    await task.release();
    await deleting;

    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(false);
    expect(await exists(sql, 'pg_publication', 'pubname', db)).toBe(false);
  });

  it('keeps a publication it does not manage (publication.autocreate.mode=disabled)', async () => {
    const { db, sql, config, connector } = await setUp({
      'slot.drop.on.delete': 'true',
      'publication.autocreate.mode': 'disabled',
    });

    await connector.deleted(config);

    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(false);
    expect(await exists(sql, 'pg_publication', 'pubname', db)).toBe(true);
  });

  it('gives up on a slot still held after its wait, naming the holder', async () => {
    const { db, sql, config } = await setUp({ 'slot.drop.on.delete': 'true' });
    const holder = await holdSlot(cluster().connectionConfig(db), db, 'someone-else', db);
    onTestFinished(() => holder.release());
    const connector = new PostgresCdcSourceConnector({ slotReleaseTimeoutMs: 200 });

    const error = await Promise.resolve(connector.deleted(config)).then(
      () => null,
      (e: Error) => e,
    );

    expect(error?.message).toMatch(
      new RegExp(`slot '${db}'.*pid ${holder.pid} \\(application_name 'someone-else'`),
    );
    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(true);
  });

  it('an offsets reset drops the slot: starting over needs a new one, and the old one would be refused', async () => {
    const { db, sql, config, connector } = await setUp({});

    const handled = await connector.alterOffsets(config, [
      { partition: { server: 'srv' }, offset: null },
    ]);

    expect(handled).toBe(true);
    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(false);
  });

  it('an offsets reset is refused while another process holds the slot, naming it', async () => {
    const { db, sql, config, connector } = await setUp({});
    const holder = await holdSlot(cluster().connectionConfig(db), db, 'someone-else', db);
    onTestFinished(() => holder.release());

    const error = await connector
      .alterOffsets(config, [{ partition: { server: 'srv' }, offset: null }])
      .then(
        () => null,
        (e: Error) => e,
      );

    expect(error?.message).toMatch(/Could not reset the offsets/);
    expect(error?.message).toMatch(
      new RegExp(`pid ${holder.pid} \\(application_name 'someone-else'`),
    );
    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(true);
  });

  it('offsets moved to a position, or of another server, leave the slot', async () => {
    const { db, sql, config, connector } = await setUp({});

    expect(
      await connector.alterOffsets(config, [
        { partition: { server: 'srv' }, offset: { lsn: 1234 } },
        { partition: { server: 'elsewhere' }, offset: null },
      ]),
    ).toBe(false);
    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(true);
  });
});
