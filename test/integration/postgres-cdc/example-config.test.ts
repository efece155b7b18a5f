/**
 * config/connectors/postgres-cdc-source.json as README tells a user to run it, against
 * config/examples/shop.sql: only where the database is changes (the test's private
 * Postgres); the snapshot of both sample tables and a change made afterwards arrive in
 * the topics within seconds.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { readTopic, startCdcWorker, useDatabase, waitFor } from './cdc-worker.ts';

const cluster = usePostgres();
const file = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');

describe('the example Postgres CDC connector on the sample shop', () => {
  it('streams customers and orders as the README says', async () => {
    const { db, sql } = await useDatabase(cluster(), 'shop', file('config/examples/shop.sql'));
    const example = JSON.parse(file('config/connectors/postgres-cdc-source.json')) as {
      name: string;
      config: Record<string, string>;
    };
    const pg = cluster();
    const config = {
      ...example.config,
      'database.hostname': pg.host,
      'database.port': String(pg.port),
      'database.user': pg.user,
      'database.password': pg.password,
      'database.dbname': db,
    };
    const worker = await startCdcWorker(useTmpDir(), example.name, config);
    await worker.process.waitForLine('snapshot done');
    await sql.query("UPDATE orders SET status = 'PAID' WHERE id = 1002");

    const orders = await waitFor('the snapshot and the update of orders', async () => {
      const records = await readTopic(worker.bootstrap, 'shop.public.orders');
      return records.length >= 5 ? records : undefined;
    });
    const customers = await readTopic(worker.bootstrap, 'shop.public.customers');

    expect(customers.map((r) => JSON.parse(r.value!).payload.after.name)).toEqual([
      'Ada Lovelace',
      'Grace Hopper',
      'Emmy Noether',
    ]);
    const events = orders.map((r) => JSON.parse(r.value!).payload);
    expect(events.map((e) => [e.op, e.after.id, e.after.status])).toEqual([
      ['r', 1001, 'PAID'],
      ['r', 1002, 'NEW'],
      ['r', 1003, 'SHIPPED'],
      ['r', 1004, 'NEW'],
      ['u', 1002, 'PAID'],
    ]);
  });
});
