import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { createSlotExportingSnapshot, dropSlot } from '../src/replication-slot.ts';
import { readSnapshot, type SnapshotProgress } from '../src/snapshot-reader.ts';
import { TableFilter } from '../src/table-filter.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { TypeRegistry } from '../src/type-registry.ts';
import { collect, envelope } from './support.ts';

const cluster = usePostgres();
const noFilter = () =>
  new TableFilter({
    schemaInclude: [],
    schemaExclude: [],
    tableInclude: [],
    tableExclude: [],
    columnInclude: [],
    columnExclude: [],
  });

describe('snapshot inside the slot exported snapshot (real Postgres)', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  it('reads existing rows in chunks as op r, marks the last one, and meets the stream with no gap or overlap', async () => {
    const db = await cluster().freshDatabase('snap');
    const sql = new pg.Client({ ...cluster().connectionConfig(db), options: SESSION_OPTIONS });
    await sql.connect();
    cleanups.push(() => sql.end());
    await sql.query(`CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id bigint PRIMARY KEY);
      INSERT INTO a SELECT i, 'v' || i FROM generate_series(1, 25) i; INSERT INTO b VALUES (1), (2); ANALYZE a; ANALYZE b;
      CREATE PUBLICATION dbz_publication FOR TABLE a, b`);
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), db);
    cleanups.push(() => dropSlot(sql, db));
    // Committed after the consistent point: must come from the stream, not the snapshot.
    await sql.query("INSERT INTO a VALUES (26, 'late')");
    const registry = new TypeRegistry(sql);
    await registry.load();
    const records: SourceRecord[] = [];
    const progress: SnapshotProgress[] = [];
    const chunks: number[] = [];
    const result = await readSnapshot({
      connection: cluster().connectionConfig(db),
      snapshotName: snap.snapshotName,
      consistentPoint: snap.consistentPoint,
      tables: [
        { schema: 'public', table: 'a' },
        { schema: 'public', table: 'b' },
      ],
      fetchSize: 10,
      context: {
        serverName: 'srv',
        database: db,
        tombstonesOnDelete: true,
        provideTransactionMetadata: false,
        sourcePartition: { server: 'srv' },
        nowMs: () => 1,
      },
      registry,
      modes: { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' },
      filter: noFilter(),
      topicPrefix: 'srv',
      emit: (r) => {
        chunks.push(r.length);
        records.push(...r);
      },
      onProgress: (p) => progress.push(p),
      nowMicros: () => 1_000_000,
    });
    await snap.release();
    expect(result.rows).toBe(27);
    expect(chunks).toEqual([10, 10, 5, 2]);
    expect(records.map((r) => envelope(r).after?.id)).toEqual([
      ...Array.from({ length: 25 }, (_, i) => i + 1),
      1,
      2,
    ]);
    expect(records.every((r) => envelope(r).op === 'r')).toBe(true);
    expect(records.slice(0, -1).every((r) => envelope(r).source.snapshot === 'true')).toBe(true);
    expect(envelope(records.at(-1)!).source).toMatchObject({
      snapshot: 'last',
      table: 'b',
      lsn: snap.consistentPoint,
    });
    expect(records.at(-1)!.sourceOffset).toMatchObject({
      snapshot: true,
      last_snapshot_record: true,
      lsn: snap.consistentPoint,
    });
    expect(records[0].topic).toBe('srv.public.a');
    expect(progress.at(-1)).toEqual({
      table: { schema: 'public', table: 'b' },
      rowsDone: 2,
      rowsEstimated: 2,
    });
    expect(
      progress.filter((p) => p.table.table === 'a').map((p) => [p.rowsDone, p.rowsEstimated]),
    ).toEqual([
      [10, 25],
      [20, 25],
      [25, 25],
    ]);
    const c = await collect(
      cluster().connectionConfig(db),
      db,
      'dbz_publication',
      snap.consistentPoint,
    );
    cleanups.push(() => c.stop());
    const streamed = await c.commits(1);
    expect(streamed.filter((m) => m.tag === 'insert')).toMatchObject([{ after: ['26', 'late'] }]);
  });
});
