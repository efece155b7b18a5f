/**
 * Snapshot throughput: rows/s of the snapshot reader (exported snapshot, COPY in text
 * format, chunks of snapshot.fetch.size, Debezium records built) next to `COPY ... TO
 * STDOUT` of the same table through psql to /dev/null (the limit), on a table of
 * BENCH_ROWS (default 1,000,000) small rows, and the reader's CPU time per row in
 * this process. Prints `name: value unit` lines.
 * Run: npx tsx bench/cdc/snapshot-throughput.ts
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { createSlotExportingSnapshot } from '../../connectors/postgres-cdc/src/replication-slot.ts';
import { readSnapshot } from '../../connectors/postgres-cdc/src/snapshot-reader.ts';
import { TableFilter } from '../../connectors/postgres-cdc/src/table-filter.ts';
import { SESSION_OPTIONS } from '../../connectors/postgres-cdc/src/text-values.ts';
import { TypeRegistry } from '../../connectors/postgres-cdc/src/type-registry.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const PSQL = process.env.PSQL ?? '/usr/bin/psql';

const cluster = await startPostgres();
try {
  const db = await cluster.freshDatabase('snapbench');
  const conn = cluster.connectionConfig(db);
  const sql = new pg.Client({ ...conn, options: SESSION_OPTIONS });
  await sql.connect();
  await sql.query('CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL, t text)');
  await sql.query(`INSERT INTO small SELECT i, i, 'row ' || i FROM generate_series(1, ${ROWS}) i`);
  await sql.query('VACUUM ANALYZE small');

  let t = performance.now();
  const copy = spawnSync(
    PSQL,
    [
      '-h',
      cluster.host,
      '-p',
      String(cluster.port),
      '-U',
      cluster.user,
      '-d',
      db,
      '-c',
      'COPY small TO STDOUT',
      '-o',
      '/dev/null',
    ],
    { env: { ...process.env, PGPASSWORD: cluster.password }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (copy.status !== 0) throw new Error(`psql COPY failed: ${copy.stderr}`);
  const copySeconds = (performance.now() - t) / 1000;
  console.log(`cdc.snapshot.copy_to_stdout: ${Math.round(ROWS / copySeconds)} rows/s`);

  const registry = new TypeRegistry(sql);
  await registry.load();
  const snap = await createSlotExportingSnapshot(conn, 'snapbench');
  let rows = 0;
  t = performance.now();
  const cpu = process.cpuUsage();
  await readSnapshot({
    connection: conn,
    snapshotName: snap.snapshotName,
    consistentPoint: snap.consistentPoint,
    tables: [{ schema: 'public', table: 'small' }],
    fetchSize: 10240,
    context: {
      serverName: 'bench',
      database: db,
      tombstonesOnDelete: true,
      provideTransactionMetadata: false,
      sourcePartition: { server: 'bench' },
      nowMs: Date.now,
    },
    registry,
    modes: { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' },
    filter: new TableFilter({
      schemaInclude: [],
      schemaExclude: [],
      tableInclude: [],
      tableExclude: [],
      columnInclude: [],
      columnExclude: [],
    }),
    topicPrefix: 'bench',
    emit: (r) => {
      rows += r.length;
    },
    nowMicros: () => Date.now() * 1000,
  });
  const snapSeconds = (performance.now() - t) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  await snap.release();
  console.log(`cdc.snapshot.reader: ${Math.round(rows / snapSeconds)} rows/s`);
  console.log(`cdc.snapshot.reader_vs_copy: ${((copySeconds / snapSeconds) * 100).toFixed(1)} %`);
  // This process's CPU per row: steadier than rows/s when other work shares the cores.
  console.log(`cdc.snapshot.reader_cpu: ${((user + system) / rows).toFixed(2)} µs/row`);
  console.log(`cdc.snapshot.peak_rss: ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  await sql.query("SELECT pg_drop_replication_slot('snapbench')");
  await sql.end();
} finally {
  await cluster.stop();
}
