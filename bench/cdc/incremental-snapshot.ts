/**
 * Incremental snapshot rate next to the initial snapshot's: rows/s of the whole source
 * task (records polled) reading a table of BENCH_ROWS (default 200,000) small rows,
 * first as the initial snapshot (snapshot.mode=initial), then as an incremental
 * snapshot (execute-snapshot through the signal table, chunks of BENCH_CHUNK_SIZE,
 * default Debezium's 1024) while a writer streams BENCH_CHANGES_PER_S (default 5,000)
 * row updates a second all along (counted apart). The writer runs on a worker thread
 * (BENCH_WRITER below), as the applications writing to a database run apart from the
 * connector. The goal is an incremental rate of at least half the initial one while
 * streaming goes on. Prints `name: value unit` lines; `cpu_per_row`, the CPU time of
 * the task's thread per row read (not Postgres', not the writer thread's), is steadier
 * than the rates on a shared machine.
 * Run: npx tsx bench/cdc/incremental-snapshot.ts
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { PostgresCdcSourceTask } from '../../connectors/postgres-cdc/src/postgres-cdc-task.ts';
import { InMemoryOffsets } from '../../connectors/postgres-cdc/test/task-driver.ts';
import {
  ManualClock,
  noopPluginMetrics,
  type SourceRecord,
  type SourceTaskContext,
} from '../../src/connect/api/index.ts';
import { type PostgresCluster, startPostgres } from '../../test/helpers/postgres.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const CHUNK = process.env.BENCH_CHUNK_SIZE ?? '1024';
const CHANGES_PER_S = Number(process.env.BENCH_CHANGES_PER_S ?? 5000);
/**
 * Where the writer runs: `thread` (the default), a worker thread, as the applications
 * writing to a database run apart from the connector; `inline`, on the task's own event
 * loop (as this bench did first), where its queries' work counts against the task's rate.
 */
const WRITER = process.env.BENCH_WRITER ?? 'thread';
if (WRITER !== 'thread' && WRITER !== 'inline')
  throw new Error(`BENCH_WRITER must be thread or inline, not '${WRITER}'`);

function context(offsets: InMemoryOffsets): SourceTaskContext {
  return {
    connectorName: 'bench',
    taskId: 0,
    offsetStorageReader: offsets,
    clock: new ManualClock(1_700_000_000_000),
    reportTrouble: () => undefined,
    pluginMetrics: () => noopPluginMetrics,
    transactionContext: null,
    topicCreationOverride: () => undefined,
  };
}

async function database(cluster: PostgresCluster, name: string): Promise<string> {
  const db = await cluster.freshDatabase(name);
  const sql = await cluster.client(db);
  await sql.query(`CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32), data varchar(2048));
    CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL, t text);
    INSERT INTO small SELECT i, i, 'row ' || i FROM generate_series(1, ${ROWS}) i`);
  await sql.query('VACUUM ANALYZE small');
  await sql.end();
  return db;
}

function config(cluster: PostgresCluster, db: string, extra: Record<string, string>) {
  return {
    'database.hostname': cluster.host,
    'database.port': String(cluster.port),
    'database.user': cluster.user,
    'database.password': cluster.password,
    'database.dbname': db,
    'topic.prefix': 'bench',
    'slot.name': db,
    'publication.autocreate.mode': 'filtered',
    'table.include.list': 'public.small',
    'poll.interval.ms': '20',
    'slot.drop.on.stop': 'true',
    ...extra,
  };
}

/** Polls until `done`; counts snapshot reads (op r) and streamed changes apart. */
async function pollUntil(
  task: PostgresCdcSourceTask,
  done: (reads: number, last: SourceRecord | null) => boolean,
): Promise<{ reads: number; changes: number }> {
  let reads = 0;
  let changes = 0;
  let last: SourceRecord | null = null;
  while (!done(reads, last)) {
    const records: SourceRecord[] = (await task.poll()) ?? [];
    last = records[records.length - 1] ?? last;
    for (const r of records) {
      const op = (r.value as { op?: string } | null)?.op;
      if (op === 'r') reads++;
      else if (op === 'u') changes++;
    }
  }
  return { reads, changes };
}

/** The writer's statement: 10 rows an UPDATE, over the whole table. */
const UPDATE = 'UPDATE small SET v = v + 1 WHERE id BETWEEN $1 AND $1 + 9';

/**
 * The writer's loop, paced to CHANGES_PER_S so every run streams the same load beside
 * the snapshot. JavaScript text: the worker thread runs it as it is (a worker gets no
 * tsx loader), this event loop through `new Function`, so both run the same code.
 */
const WRITE_LOOP = `
  let updates = 0;
  const began = performance.now();
  while (writing()) {
    const from = 1 + ((updates * 37) % rows);
    await client.query(update, [from]);
    updates += 10;
    const ahead = (updates / perSecond) * 1000 - (performance.now() - began);
    if (ahead > 0) await new Promise((r) => setTimeout(r, ahead));
  }`;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const pg = require(workerData.pg);
(async () => {
  let stopping = false;
  parentPort.once('message', () => { stopping = true; });
  const writing = () => !stopping;
  const { rows, perSecond, update } = workerData;
  const client = new pg.Client(workerData.connection);
  client.on('error', () => undefined);
  await client.connect();
  try {${WRITE_LOOP}
  } finally {
    await client.end();
  }
})();
`;

/** The writer, started on a worker thread or on this event loop (BENCH_WRITER). */
function startWriter(connection: pg.ClientConfig): { stop(): Promise<void> } {
  const o = { rows: ROWS, perSecond: CHANGES_PER_S, update: UPDATE };
  if (WRITER === 'inline') {
    let stopping = false;
    const client = new pg.Client(connection);
    client.on('error', () => undefined);
    const loop = new Function(
      'client',
      'writing',
      'rows',
      'perSecond',
      'update',
      `return (async () => {${WRITE_LOOP}\n})();`,
    ) as (...args: unknown[]) => Promise<void>;
    const done = client
      .connect()
      .then(() => loop(client, () => !stopping, o.rows, o.perSecond, o.update))
      .finally(() => client.end());
    return {
      stop: async () => {
        stopping = true;
        await done;
      },
    };
  }
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { ...o, connection, pg: createRequire(import.meta.url).resolve('pg') },
  });
  const exited = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', () => resolve());
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      await exited;
    },
  };
}

/**
 * CPU time of this thread (the task's event loop) in µs, from Linux's schedstat (ns):
 * unlike wall time it does not grow while other processes hold the CPU, and unlike
 * process.cpuUsage() it leaves the writer thread out. Null where there is no such file.
 */
function threadCpuMicros(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000;
  } catch {
    return null;
  }
}

function perRow(from: number | null): string {
  const now = threadCpuMicros();
  return from === null || now === null ? 'n/a' : ((now - from) / ROWS).toFixed(2);
}

const cluster = await startPostgres();
try {
  // The initial snapshot: from start() to the last row polled.
  const initialDb = await database(cluster, 'incbench_initial');
  const initial = new PostgresCdcSourceTask();
  let t = performance.now();
  let cpu = threadCpuMicros();
  await initial.start(
    config(cluster, initialDb, { 'snapshot.mode': 'initial' }),
    context(new InMemoryOffsets()),
  );
  await pollUntil(initial, (reads) => reads >= ROWS);
  const initialSeconds = (performance.now() - t) / 1000;
  const initialCpu = perRow(cpu);
  await initial.stop();
  const initialRate = ROWS / initialSeconds;
  console.log(`cdc.snapshot.initial: ${Math.round(initialRate)} rows/s`);
  console.log(`cdc.snapshot.initial.cpu_per_row: ${initialCpu} us`);

  // The incremental snapshot, with a writer updating rows all along.
  const incDb = await database(cluster, 'incbench_incremental');
  const incremental = new PostgresCdcSourceTask();
  await incremental.start(
    config(cluster, incDb, {
      'snapshot.mode': 'no_data',
      'signal.data.collection': 'public.debezium_signal',
      'incremental.snapshot.chunk.size': CHUNK,
    }),
    context(new InMemoryOffsets()),
  );
  const writer = startWriter(cluster.connectionConfig(incDb));
  const signal = new pg.Client(cluster.connectionConfig(incDb));
  signal.on('error', () => undefined);
  await signal.connect();
  t = performance.now();
  cpu = threadCpuMicros();
  await signal.query(
    `INSERT INTO debezium_signal VALUES ('bench', 'execute-snapshot', '{"data-collections": ["public.small"]}')`,
  );
  // Done once a record after the reads no longer carries the snapshot's state (reads of
  // rows the writer changed inside their window are dropped, so fewer than ROWS come).
  const { changes } = await pollUntil(
    incremental,
    (reads, last) =>
      reads > 0 && last !== null && !('incremental_snapshot_collections' in last.sourceOffset),
  );
  const incrementalSeconds = (performance.now() - t) / 1000;
  const incrementalCpu = perRow(cpu);
  await writer.stop();
  await incremental.stop();
  await signal.end();
  const incrementalRate = ROWS / incrementalSeconds;
  console.log(`cdc.snapshot.incremental: ${Math.round(incrementalRate)} rows/s`);
  console.log(`cdc.snapshot.incremental.chunk_size: ${CHUNK} rows`);
  console.log(`cdc.snapshot.incremental.writer: ${WRITER} (BENCH_WRITER)`);
  console.log(
    `cdc.snapshot.incremental.cpu_per_row: ${incrementalCpu} us${WRITER === 'inline' ? ' (writer included)' : ''}`,
  );
  console.log(
    `cdc.snapshot.incremental.streamed_meanwhile: ${Math.round(changes / incrementalSeconds)} changes/s`,
  );
  console.log(
    `cdc.snapshot.incremental_vs_initial: ${(incrementalRate / initialRate).toFixed(2)} ratio (goal >= 0.50)`,
  );
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await cluster.stop();
}
