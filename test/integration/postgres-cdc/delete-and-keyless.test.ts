/**
 * The CDC source through `connect standalone`: what deleting a connector does to its
 * slot and publication (dropped with slot.drop.on.delete, otherwise left and reported
 * at WARN with the WAL they retain and the SQL that drops them), and a table without
 * a primary key beside a keyed one (its topic created with cleanup.policy=delete, the
 * keyed one compacted, both streaming; refused by name where the user asked for
 * compacted topics explicitly).
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  endOffset,
  readTopic,
  rest,
  startCdcWorker,
  useAdmin,
  useDatabase,
  waitFor,
} from './cdc-worker.ts';

const cluster = usePostgres();

const database = (prefix: string, ddl: string) => useDatabase(cluster(), prefix, ddl);

const exists = async (sql: pg.Client, table: string, column: string, name: string) =>
  (await sql.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [name])).rowCount === 1;

describe('Postgres CDC through a standalone worker: deleting a connector', () => {
  it('leaves slot and publication by default and says at WARN how much WAL they hold and how to drop them', async () => {
    // A row, so the slot has handed something on and is the connector's to keep.
    const { db, sql } = await database(
      'keep',
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)',
    );
    const worker = await startCdcWorker(
      useTmpDir(),
      'keep',
      cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.t' }),
    );
    await worker.process.waitForLine('snapshot done');

    const deleted = await rest(worker, 'DELETE', '/connectors/keep');

    expect(deleted.status).toBe(204);
    const line = await worker.process.waitForLine(/pg_drop_replication_slot/);
    const { level, msg: warn } = JSON.parse(line) as { level: number; msg: string };
    expect(level).toBe(40);
    expect(warn).toMatch(/retains \d+ (bytes|kB|MB) of WAL/);
    expect(warn).toContain(`SELECT pg_drop_replication_slot('${db}');`);
    expect(warn).toContain(`DROP PUBLICATION "${db}";`);
    expect(await exists(sql, 'pg_replication_slots', 'slot_name', db)).toBe(true);
  });

  it('drops slot and publication with slot.drop.on.delete=true', async () => {
    const { db, sql } = await database('drop', 'CREATE TABLE t (id int PRIMARY KEY)');
    const worker = await startCdcWorker(
      useTmpDir(),
      'drop',
      cdcConnectorConfig(cluster(), db, {
        'table.include.list': 'public.t',
        'slot.drop.on.delete': 'true',
      }),
    );
    await worker.process.waitForLine('snapshot done');

    const deleted = await rest(worker, 'DELETE', '/connectors/drop');

    expect(deleted.status).toBe(204);
    await waitFor('the slot and the publication to be dropped', async () =>
      !(await exists(sql, 'pg_replication_slots', 'slot_name', db)) &&
      !(await exists(sql, 'pg_publication', 'pubname', db))
        ? true
        : undefined,
    );
  });
});

describe('Postgres CDC through a standalone worker: a table without a primary key', () => {
  const DDL = `CREATE TABLE k (id int PRIMARY KEY, v text); CREATE TABLE nk (id int, v text);
    INSERT INTO k VALUES (1, 'a'); INSERT INTO nk VALUES (1, 'a')`;

  it('streams beside a keyed table: its topic is created with delete, the keyed one compacted', async () => {
    const { db, sql } = await database('keyless', DDL);
    const worker = await startCdcWorker(useTmpDir(), 'keyless', cdcConnectorConfig(cluster(), db));
    await worker.process.waitForLine('snapshot done');
    await sql.query("INSERT INTO nk VALUES (2, 'b'); INSERT INTO k VALUES (2, 'b')");

    const admin = await useAdmin(worker.bootstrap);
    for (const topic of ['PostgreSQL_server.public.k', 'PostgreSQL_server.public.nk'])
      await waitFor(`2 records in ${topic}`, async () =>
        ((await endOffset(admin, topic)) ?? 0) >= 2 ? true : undefined,
      );

    const policies = await admin.describeConfigs({
      includeSynonyms: false,
      resources: ['k', 'nk'].map((t) => ({
        type: 2,
        name: `PostgreSQL_server.public.${t}`,
        configNames: ['cleanup.policy'],
      })),
    });
    expect(
      Object.fromEntries(
        policies.resources.map((r) => [r.resourceName, r.configEntries[0].configValue]),
      ),
    ).toEqual({ 'PostgreSQL_server.public.k': 'compact', 'PostgreSQL_server.public.nk': 'delete' });
    const nk = await readTopic(worker.bootstrap, 'PostgreSQL_server.public.nk');
    expect(nk.map((r) => [r.key, JSON.parse(r.value!).payload.after])).toEqual([
      [null, { id: 1, v: 'a' }],
      [null, { id: 2, v: 'b' }],
    ]);
    const status = await rest(worker, 'GET', '/connectors/keyless/status');
    expect(status.body.tasks[0].state).toBe('RUNNING');
  });

  it('fails the connector naming the table where the user asked for compacted topics', async () => {
    const { db } = await database('compacted', DDL);
    const worker = await startCdcWorker(useTmpDir(), 'compacted', {
      ...cdcConnectorConfig(cluster(), db),
      'topic.creation.default.cleanup.policy': 'compact',
    });

    const trace = await waitFor('the connector to fail', async () => {
      const s = await rest(worker, 'GET', '/connectors/compacted/status');
      return s.body.connector?.state === 'FAILED' ? String(s.body.connector.trace) : undefined;
    });

    expect(trace).toMatch(/public\.nk/);
    expect(trace).toMatch(/topic\.creation\.default\.cleanup\.policy=compact/);
  });
});
