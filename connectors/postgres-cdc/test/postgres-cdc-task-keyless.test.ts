import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { useTaskDatabases } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

const cluster = usePostgres();
const DELETE = { 'cleanup.policy': 'delete' };

describe('Postgres CDC task with tables without a key (real Postgres)', () => {
  const { cleanups, database, config } = useTaskDatabases(cluster, 'keyless');

  async function run(db: string, overrides: Record<string, string> = {}): Promise<TaskDriver> {
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    const driver = new TaskDriver(task, new InMemoryOffsets());
    await driver.start(config(db, overrides));
    return driver;
  }

  const TABLES = `CREATE TABLE k (id int PRIMARY KEY, v text); CREATE TABLE nk (id int, v text);
    CREATE TABLE ri (id int NOT NULL, v text); CREATE UNIQUE INDEX ri_id ON ri (id);
    ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_id;
    INSERT INTO k VALUES (1, 'a'); INSERT INTO nk VALUES (1, 'a'); INSERT INTO ri VALUES (1, 'a');`;

  it('marks the topics of snapshotted tables without a key cleanup.policy=delete before any record, and streams them beside keyed ones', async () => {
    const { db, sql } = await database(TABLES);
    const driver = await run(db);

    // Before the first poll: what the runtime needs when it creates the topics.
    expect(Object.fromEntries(driver.topicOverrides)).toEqual({ 'srv.public.nk': DELETE });
    await sql.query("INSERT INTO k VALUES (2, 'b'); INSERT INTO nk VALUES (2, 'b')");
    const records = await driver.pollUntil(
      'snapshot and stream of both tables',
      (d) => d.filter((r) => r.value !== null).length >= 5,
    );
    expect(records.filter((r) => r.topic === 'srv.public.nk').map((r) => r.key)).toEqual([
      null,
      null,
    ]);
    expect(records.filter((r) => r.topic === 'srv.public.k')).toHaveLength(2);
  });

  it('marks a table without a key that streaming meets later, before its first record', async () => {
    const { db, sql } = await database('CREATE TABLE k (id int PRIMARY KEY)');
    const driver = await run(db, { 'snapshot.mode': 'no_data' });
    await sql.query(
      "CREATE TABLE later (v text); INSERT INTO later VALUES ('x'); INSERT INTO k VALUES (1)",
    );

    let overrideBeforeRecord: boolean | undefined;
    await driver.pollUntil('both inserts', (d) => {
      if (overrideBeforeRecord === undefined && d.some((r) => r.topic === 'srv.public.later'))
        overrideBeforeRecord = driver.topicOverrides.has('srv.public.later');
      return d.length >= 2;
    });

    expect(overrideBeforeRecord).toBe(true);
    expect(Object.fromEntries(driver.topicOverrides)).toEqual({ 'srv.public.later': DELETE });
  });

  it('refuses to start, naming the tables, when the user asked for compacted topics explicitly', async () => {
    const { db } = await database(TABLES);
    const explicit = { 'topic.creation.default.cleanup.policy': 'compact' };
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    const connector = new PostgresCdcSourceConnector();
    cleanups.push(() => Promise.resolve(connector.stop()));

    const fromTask = new TaskDriver(task, new InMemoryOffsets()).start(config(db, explicit)).then(
      () => '',
      (e: Error) => e.message,
    );
    const fromConnector = Promise.resolve(connector.start(config(db, explicit))).then(
      () => '',
      (e: Error) => e.message,
    );

    for (const message of [await fromTask, await fromConnector]) {
      expect(message).toMatch(/public\.nk/);
      expect(message).not.toMatch(/public\.(k|ri)\b/);
      expect(message).toMatch(/topic\.creation\.default\.cleanup\.policy=compact/);
      expect(message).toMatch(/primary key/);
    }
  });

  it('fails, naming the table, when streaming meets a table without a key whose topic the user compacts', async () => {
    const { db, sql } = await database('CREATE TABLE k (id int PRIMARY KEY)');
    const driver = await run(db, {
      'snapshot.mode': 'no_data',
      'topic.creation.groups': 'compacted',
      'topic.creation.compacted.include': 'srv\\.public\\.later',
      'topic.creation.compacted.cleanup.policy': 'compact',
    });
    await sql.query("CREATE TABLE later (v text); INSERT INTO later VALUES ('x')");

    let error: Error | null = null;
    while (error === null) {
      await driver.pollOnce().catch((e: Error) => {
        error = e;
      });
    }

    expect((error as Error).message).toMatch(/^Table public\.later has no primary key/);
    expect((error as Error).message).toMatch(/topic\.creation\.compacted\.cleanup\.policy=compact/);
    expect(driver.delivered.filter((r) => r.topic === 'srv.public.later')).toEqual([]);
    expect(driver.topicOverrides.size).toBe(0);
  });
});
