/**
 * The demo's database: `shop`, with the tables and rows of config/examples/shop.sql (the
 * sample the example connectors read), created on the first run and found again on the
 * next ones.
 *
 * Both tables get REPLICA IDENTITY FULL, so a delete's change event carries the whole
 * old row: the lake's `__deleted` row then has every column, not just the key with
 * NULLs in columns that are NOT NULL in the database.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { repositoryRoot } from '../../util/code-layout.ts';

export const SHOP_SQL = join(repositoryRoot, 'config', 'examples', 'shop.sql');
export const SHOP_TABLES = ['customers', 'orders'] as const;

/** Creates what is missing; says whether the schema was created now. */
export async function ensureShopDatabase(
  connectionConfig: (database: string) => pg.ClientConfig,
  database: string,
): Promise<{ created: boolean }> {
  const admin = new pg.Client(connectionConfig('postgres'));
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0)
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  const client = new pg.Client(connectionConfig(database));
  await client.connect();
  try {
    const table = await client.query(
      "SELECT to_regclass('public.customers') IS NOT NULL AS present",
    );
    if (table.rows[0].present) return { created: false };
    await client.query('BEGIN');
    await client.query(readFileSync(SHOP_SQL, 'utf8'));
    for (const t of SHOP_TABLES) await client.query(`ALTER TABLE ${t} REPLICA IDENTITY FULL`);
    await client.query('COMMIT');
    return { created: true };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await client.end();
  }
}
