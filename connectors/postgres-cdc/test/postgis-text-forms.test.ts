/**
 * PostGIS geometry and geography from real Postgres text, read the way the snapshot
 * reads rows (COPY ... TO STDOUT, copy-text-parser.ts) and mapped by the column's
 * catalog type, compared with Debezium's representation (Geometry / Geography {wkb:
 * the EWKB bytes, srid}). pgoutput sends the same output-function text.
 *
 * The embedded Postgres the streaming tests use has no PostGIS build, so this runs on
 * the machine's Postgres at 127.0.0.1:5432 (user postgres, trust), which has Debian's
 * postgresql-15-postgis-3. Without it, CREATE EXTENSION fails and so does this test:
 * it is never skipped.
 */
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyTextParser } from '../src/copy-text-parser.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { mapColumn } from '../src/type-mapping.ts';
import { TypeRegistry } from '../src/type-registry.ts';

const MACHINE = { host: '127.0.0.1', port: 5432, user: 'postgres' };
const DB = `cdc_postgis_${process.pid}`;

const hex = (h: string) => Buffer.from(h, 'hex');
// 'SRID=4326;POINT(1 2)': type 0x20000001 (SRID flag | point), SRID 0x10E6, x 1.0, y 2.0.
const POINT_4326 = '0101000020E6100000000000000000F03F0000000000000040';
// 'LINESTRING(0 0,1 1)' without SRID: type 2, 2 points.
const LINE = `010200000002000000${'00'.repeat(16)}000000000000F03F000000000000F03F`;

describe('PostGIS geometry and geography text (machine Postgres)', () => {
  let admin: pg.Client;
  let client: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ ...MACHINE, database: 'postgres' });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`CREATE DATABASE ${DB}`);
    client = new pg.Client({ ...MACHINE, database: DB, options: SESSION_OPTIONS });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin?.end();
  });

  it('sends the EWKB bytes and the SRID, for columns, arrays and domains', async () => {
    await client.query(`CREATE EXTENSION postgis;
      CREATE DOMAIN place AS geometry;
      CREATE TABLE shapes (id int, g geometry, l geometry, gg geography, ga geometry[], d place);
      INSERT INTO shapes VALUES (1, 'SRID=4326;POINT(1 2)', 'LINESTRING(0 0,1 1)', 'POINT(1 2)',
        ARRAY['SRID=4326;POINT(1 2)'::geometry, 'LINESTRING(0 0,1 1)'::geometry], 'SRID=4326;POINT(1 2)')`);
    const registry = new TypeRegistry(client);
    await registry.load();
    const columns = (
      await client.query(
        `SELECT attname, atttypid::int AS oid, atttypmod AS typmod FROM pg_attribute
          WHERE attrelid = 'shapes'::regclass AND attnum > 0 ORDER BY attnum`,
      )
    ).rows;
    const parser = new CopyTextParser(columns.length);
    const copy = client.query(copyTo('COPY (SELECT * FROM shapes) TO STDOUT'));
    for await (const data of copy as AsyncIterable<Buffer>) parser.push(data);
    const row = parser.nextRow() as string[];
    const where = (column: string) => ({ table: { schema: 'public', table: 'shapes' }, column });
    const modes = { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' } as const;
    const mapped = Object.fromEntries(
      columns.map((c, i) => {
        const m = mapColumn(registry, c.oid, c.typmod, modes, where(c.attname));
        if (!m) throw new Error(`no mapping for ${c.attname}`);
        return [c.attname, { schema: m.schema, value: m.fromText(row[i]) }];
      }),
    );

    expect(mapped.g.value).toEqual({ wkb: hex(POINT_4326), srid: 4326, extensions: null });
    expect(mapped.l.value).toEqual({ wkb: hex(LINE), srid: null, extensions: null });
    expect(mapped.gg.value).toEqual({ wkb: hex(POINT_4326), srid: 4326 });
    // geometry's array delimiter is ':'.
    expect(mapped.ga.value).toEqual([
      { wkb: hex(POINT_4326), srid: 4326, extensions: null },
      { wkb: hex(LINE), srid: null, extensions: null },
    ]);
    expect(mapped.d.value).toEqual({ wkb: hex(POINT_4326), srid: 4326, extensions: null });
    expect(mapped.g.schema).toMatchObject({ name: 'io.debezium.data.geometry.Geometry' });
    expect(mapped.gg.schema).toMatchObject({ name: 'io.debezium.data.geometry.Geography' });
    expect(mapped.ga.schema).toMatchObject({
      type: 'array',
      valueSchema: { name: 'io.debezium.data.geometry.Geometry', optional: true },
    });
  });
});
