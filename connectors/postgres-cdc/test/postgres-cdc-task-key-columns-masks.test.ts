import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { useTaskDatabases } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

const cluster = usePostgres();

/** Debezium's hash, from its documentation: hex(digest(salt ‖ bytes)); v1 bytes are Java's serialization of the (ASCII) String. */
function debeziumHash(algorithm: string, salt: string, value: string, v: 'v1' | 'v2'): string {
  const text = Buffer.from(value, 'ascii');
  const bytes =
    v === 'v2'
      ? text
      : Buffer.concat([Buffer.from('aced000574', 'hex'), Buffer.from([0, text.length]), text]);
  return createHash(algorithm).update(Buffer.from(salt)).update(bytes).digest('hex');
}

type Envelope = {
  op: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};
const env = (r: SourceRecord) => r.value as Envelope;
const fieldNames = (r: SourceRecord) => r.keySchema?.fields?.map((f) => f.name);

describe('message.key.columns and column masks, snapshot and stream (real Postgres)', () => {
  const { cleanups, database, config } = useTaskDatabases(cluster, 'keymask');

  it('keys a keyless table and overrides a primary key, and masks, hashes and truncates values but not keys', async () => {
    const { db, sql } = await database(`
      CREATE TABLE nk (tenant int NOT NULL, code text NOT NULL, v text);
      ALTER TABLE nk REPLICA IDENTITY FULL;
      CREATE TABLE pk (id int PRIMARY KEY, region text NOT NULL, email text, code varchar(8), name text, n int);
      ALTER TABLE pk REPLICA IDENTITY FULL;
      INSERT INTO nk VALUES (1, 'a', 'x');
      INSERT INTO pk VALUES (1, 'eu', 'annek@noanswer.org', 'hello', 'Kretchmar', 7);
      CREATE TABLE ri (id int NOT NULL, v text); CREATE UNIQUE INDEX ri_id ON ri (id);
      ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_id; INSERT INTO ri VALUES (5, 'r');`);
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    const driver = new TaskDriver(task, new InMemoryOffsets());
    await driver.start(
      config(db, {
        'message.key.columns': 'public.nk:code,tenant; public.pk:region,id',
        // Refused for a table without a key (keyless-tables.ts); nk has one now.
        'topic.creation.default.cleanup.policy': 'compact',
        'column.mask.hash.SHA-256.with.salt.CzQMA0cB5K': 'public.pk.email',
        'column.mask.hash.v2.MD5.with.salt.salt': 'public.pk.code',
        'column.mask.with.5.chars': 'public.pk.region,public.pk.n',
        'column.truncate.to.4.chars': 'public.pk.name',
      }),
    );

    // A table with a key from message.key.columns gets an ordinary (compacted) topic.
    expect(driver.topicOverrides.size).toBe(0);
    const snapshot = [...(await driver.pollUntil('the snapshot', (d) => d.length >= 3))];
    await sql.query(`INSERT INTO pk VALUES (2, 'us', 'b@example.com', 'world', 'Smith', NULL);
      INSERT INTO nk VALUES (2, 'b', 'y'); DELETE FROM nk WHERE tenant = 1`);
    const all = await driver.pollUntil('the stream', (d) => d.length >= 7);
    const streamed = all.slice(snapshot.length);

    // Keyed by its replica identity index in the snapshot as in the stream (no null keys).
    expect(snapshot.filter((r) => r.topic === 'srv.public.ri').map((r) => r.key)).toEqual([
      { id: 5 },
    ]);
    const nkRead = snapshot.find((r) => r.topic === 'srv.public.nk') as SourceRecord;
    expect(fieldNames(nkRead)).toEqual(['code', 'tenant']);
    expect(nkRead.key).toEqual({ code: 'a', tenant: 1 });
    const nk = streamed.filter((r) => r.topic === 'srv.public.nk');
    expect(nk.map((r) => [r.key, r.value === null ? null : env(r).op])).toEqual([
      [{ code: 'b', tenant: 2 }, 'c'],
      [{ code: 'a', tenant: 1 }, 'd'],
      [{ code: 'a', tenant: 1 }, null],
    ]);

    const pk = [...snapshot, ...streamed].filter((r) => r.topic === 'srv.public.pk');
    expect(pk.map((r) => env(r).op)).toEqual(['r', 'c']);
    expect(fieldNames(pk[0])).toEqual(['region', 'id']);
    expect(pk.map((r) => r.key)).toEqual([
      { region: 'eu', id: 1 },
      { region: 'us', id: 2 },
    ]);
    expect(pk.map((r) => env(r).after)).toEqual([
      {
        id: 1,
        region: '*****',
        email: debeziumHash('sha256', 'CzQMA0cB5K', 'annek@noanswer.org', 'v1'),
        code: debeziumHash('md5', 'salt', 'hello', 'v2').slice(0, 8),
        name: 'Kret',
        n: 7,
      },
      {
        id: 2,
        region: '*****',
        email: debeziumHash('sha256', 'CzQMA0cB5K', 'b@example.com', 'v1'),
        code: debeziumHash('md5', 'salt', 'world', 'v2').slice(0, 8),
        name: 'Smit',
        n: null,
      },
    ]);
    const value = pk[0].valueSchema?.fields?.find((f) => f.name === 'after')?.schema;
    const field = (name: string) => value?.fields?.find((f) => f.name === name)?.schema;
    expect(field('email')).toMatchObject({ type: 'string', parameters: { masked: 'true' } });
    expect(field('name')).toMatchObject({ type: 'string', parameters: { truncateLength: '4' } });
    expect(field('n')?.parameters).toBeUndefined();
    expect(pk[0].keySchema?.fields?.[0].schema.parameters).toBeUndefined();

    // A key column the replica identity does not send of old rows: refused, naming the fix.
    await sql.query('ALTER TABLE pk REPLICA IDENTITY DEFAULT');
    const connector = new PostgresCdcSourceConnector();
    const refused = await Promise.resolve(
      connector.start(config(db, { 'message.key.columns': 'public.pk:region,id' })),
    ).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(refused).toMatch(
      /^message\.key\.columns keys public\.pk by \(region, id\), but under REPLICA IDENTITY DEFAULT Postgres sends only \(id\) of a deleted or updated row: /,
    );
    expect(refused).toContain('ALTER TABLE public.pk REPLICA IDENTITY FULL');
  });
});
