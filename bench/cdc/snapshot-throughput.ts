/**
 * Snapshot throughput: rows/s of the snapshot reader (exported snapshot, COPY in text
 * format, chunks of snapshot.fetch.size, Debezium records built) next to `COPY ... TO
 * STDOUT` of the same table through psql to /dev/null (the limit), on a table of
 * BENCH_ROWS (default 1,000,000) small rows, and the reader's CPU time per row in
 * this process. Then snapshot.max.threads: two such tables read with 1 and with 2
 * connections (rows/s of both runs, and their ratio; the second connection adds a
 * Postgres backend's COPY, parsing stays on this one event loop). Prints
 * `name: value unit` lines.
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
  // The cluster stops under it when the bench fails: the error is the bench's, not this.
  sql.on('error', () => undefined);
  await sql.connect();
  await sql.query('CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL, t text)');
  await sql.query(`INSERT INTO small SELECT i, i, 'row ' || i FROM generate_series(1, ${ROWS}) i`);
  await sql.query('CREATE TABLE small2 AS TABLE small; ALTER TABLE small2 ADD PRIMARY KEY (id)');
  await sql.query('VACUUM ANALYZE small');
  await sql.query('VACUUM ANALYZE small2');

  const t = performance.now();
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
  /** One snapshot of `tables` in a new slot: rows, seconds, this process's CPU µs. */
  const snapshotOf = async (tables: string[], maxThreads: number) => {
    const snap = await createSlotExportingSnapshot(conn, 'snapbench');
    let rows = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await readSnapshot({
      connection: conn,
      snapshotName: snap.snapshotName,
      consistentPoint: snap.consistentPoint,
      tables: tables.map((table) => ({ schema: 'public', table })),
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
      filter: TableFilter.everything(),
      topicPrefix: 'bench',
      emit: (r) => {
        rows += r.length;
      },
      nowMicros: () => Date.now() * 1000,
      settings: {
        include: [],
        selectOverrides: new Map(),
        locking: 'none',
        lockTimeoutMs: 0,
        delayMs: 0,
        maxThreads,
      },
    });
    const seconds = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(cpu);
    await snap.release();
    await sql.query("SELECT pg_drop_replication_slot('snapbench')");
    return { rows, seconds, cpuMicros: user + system };
  };

  const one = await snapshotOf(['small'], 1);
  console.log(`cdc.snapshot.reader: ${Math.round(one.rows / one.seconds)} rows/s`);
  console.log(`cdc.snapshot.reader_vs_copy: ${((copySeconds / one.seconds) * 100).toFixed(1)} %`);
  // This process's CPU per row: steadier than rows/s when other work shares the cores.
  console.log(`cdc.snapshot.reader_cpu: ${(one.cpuMicros / one.rows).toFixed(2)} µs/row`);
  const serial = await snapshotOf(['small', 'small2'], 1);
  const parallel = await snapshotOf(['small', 'small2'], 2);
  console.log(
    `cdc.snapshot.two_tables_1_thread: ${Math.round(serial.rows / serial.seconds)} rows/s`,
  );
  console.log(
    `cdc.snapshot.two_tables_2_threads: ${Math.round(parallel.rows / parallel.seconds)} rows/s`,
  );
  console.log(
    `cdc.snapshot.two_threads_vs_one: ${((serial.seconds / parallel.seconds) * 100).toFixed(1)} %`,
  );
  console.log(`cdc.snapshot.peak_rss: ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  await sql.end();
} finally {
  await cluster.stop();
}
