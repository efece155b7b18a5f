/**
 * CDC end to end: Postgres -> `connect standalone` (postgres-cdc source, JsonConverter,
 * embedded broker in the same process) -> topic, next to the limits measured in the
 * same run on the same machine:
 *   snapshot   rows/s from the task's "snapshot of" log line until the last row is in
 *              the topic, next to `COPY small TO STDOUT` (psql to /dev/null)
 *   1 tx       BENCH_ROWS small rows in one transaction (default 1,000,000), from the
 *              COMMIT returning until the last event is in the topic (pgoutput sends
 *              nothing of a transaction before its commit, so all decoding is after it)
 *   N tx       BENCH_TXNS transactions of 10 rows (default 100,000), written while the
 *              worker is stopped, then read as a backlog: from the restarted task's
 *              "start plan" line until the last event is in the topic
 *   limit      pg_recvlogical decoding the same changes with pgoutput to /dev/null,
 *              from its own slot created before each workload
 *   memory     peak RSS (VmHWM) of the worker process, broker thread included
 *   CPU        the worker process's CPU time per row/event over each timed window, of
 *              all its threads and of its main thread alone (the connector, converter
 *              and producer; the broker has a thread of its own): much steadier than
 *              the rates when the machine is shared
 *   machine    first_touch_rate: how fast a child process gets 1 GiB of memory no
 *              process has used lately (see "Fresh memory")
 * Topic progress is read as the partition's high watermark: one ListOffsets request
 * every 20 ms on the project's protocol client. (kafkajs's admin, with a Metadata
 * request per poll, took about a tenth of a core from the worker it measured.)
 * Fresh memory: on this VM a page of guest memory is slow the first time it is used
 * after the hypervisor took it back (a child filling fresh memory: 420-680 MB/s; `dd`
 * to a new file: ~520 MB/s, to the same file again: 10 GB/s), and it takes back
 * freed memory within seconds (virtio-balloon free page reporting: `dd` into a file
 * freed 10 s earlier is as slow as the first time, into one freed just before 5 GB/s;
 * DAMON pages idle memory out too). The run writes ~6 GB of topic into new page
 * cache, so how much of that memory happens to be warm moves the snapshot between
 * ~120k and ~190k rows/s from run to run: on cold memory the broker thread spent 60%
 * of the snapshot in those page faults. No warm-up can hold (what it frees is taken
 * back before the broker writes), so none is done; the CPU-per-row lines show the
 * code's cost, and first_touch_rate the machine's state.
 * BENCH_SCHEMAS=false runs the converters with schemas.enable=false. BENCH_CPU_PROF=dir
 * runs the worker under `node --cpu-prof` writing its profile into dir.
 * Run: npx tsx bench/cdc/end-to-end.ts          Prints `name: value unit` lines.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiKey } from '../../src/protocol/api-keys.ts';
import { ClusterClient } from '../../src/protocol/client/cluster-client.ts';
import type { Message } from '../../src/protocol/codec.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { statCpuMs } from '../proc-cpu.ts';
import { recvlogicalSeconds } from './pg-recvlogical.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const TXNS = Number(process.env.BENCH_TXNS ?? 100_000);
const SNAPSHOT_ROWS = Number(process.env.BENCH_SNAPSHOT_ROWS ?? 500_000);
const SCHEMAS = process.env.BENCH_SCHEMAS !== 'false';
const CPU_PROF = process.env.BENCH_CPU_PROF;
const PSQL = process.env.PSQL ?? '/usr/bin/psql';
const TOPIC = 'bench.public.small';
const repo = fileURLToPath(new URL('../..', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'cdc-e2e-bench-'));
async function main(): Promise<void> {
  print('cdc.e2e.machine.first_touch_rate', firstTouchRate(1), 'MB/s');
  const cluster = await startPostgres();
  let worker: Worker | null = null;
  try {
    const db = await cluster.freshDatabase('bench');
    const sql = new pg.Client(cluster.connectionConfig(db));
    // The cluster stops under it when the run fails: the failure itself is what to report.
    sql.on('error', () => undefined);
    await sql.connect();
    await sql.query('CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL, t text)');
    await sql.query(
      `INSERT INTO small SELECT i, i, 'row ' || i FROM generate_series(1, ${SNAPSHOT_ROWS}) i`,
    );
    await sql.query('VACUUM ANALYZE small');
    await sql.query('CREATE PUBLICATION bench_pub FOR TABLE small');

    // COPY, the snapshot's limit.
    let t = performance.now();
    const copy = spawnSync(
      PSQL,
      ['-h', cluster.host, '-p', String(cluster.port), '-U', cluster.user, '-d', db],
      {
        input: 'COPY small TO STDOUT',
        env: { ...process.env, PGPASSWORD: cluster.password },
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    if (copy.status !== 0) throw new Error(`psql COPY failed: ${copy.stderr}`);
    print('cdc.e2e.snapshot.copy_to_stdout', SNAPSHOT_ROWS / seconds(t), 'rows/s');

    const connector = {
      'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
      'database.hostname': cluster.host,
      'database.port': String(cluster.port),
      'database.user': cluster.user,
      'database.password': cluster.password,
      'database.dbname': db,
      'topic.prefix': 'bench',
      'slot.name': 'bench_worker',
      'publication.name': 'bench_pub',
      'publication.autocreate.mode': 'disabled',
      'table.include.list': 'public.small',
      'topic.creation.default.replication.factor': '-1',
      'topic.creation.default.partitions': '1',
      'topic.creation.default.cleanup.policy': 'compact',
    };
    writeFileSync(join(dir, 'cdc.json'), JSON.stringify({ name: 'cdc', config: connector }));
    writeFileSync(
      join(dir, 'worker.properties'),
      [
        'bootstrap.servers=',
        'broker.host=127.0.0.1',
        'broker.port=0',
        `broker.data.dir=${join(dir, 'broker')}`,
        'listeners=http://127.0.0.1:0',
        `plugin.path=${join(repo, 'connectors/postgres-cdc')}`,
        `offset.storage.file.filename=${join(dir, 'connect.offsets')}`,
        'offset.flush.interval.ms=1000',
        'key.converter=org.apache.kafka.connect.json.JsonConverter',
        'value.converter=org.apache.kafka.connect.json.JsonConverter',
        `key.converter.schemas.enable=${SCHEMAS}`,
        `value.converter.schemas.enable=${SCHEMAS}`,
        '',
      ].join('\n'),
    );

    // Snapshot through the worker.
    worker = await Worker.start();
    const snapStart = await worker.waitForLine(/snapshot of 1 tables/);
    let cpu = worker.cpuMs();
    await worker.waitForOffset(SNAPSHOT_ROWS);
    print(
      'cdc.e2e.snapshot.worker',
      SNAPSHOT_ROWS / ((performance.now() - snapStart) / 1000),
      'rows/s',
    );
    printCpu('cdc.e2e.snapshot', 'row', cpu, worker.cpuMs(), SNAPSHOT_ROWS);
    await worker.waitForLine(/snapshot done/);
    let expected = SNAPSHOT_ROWS;

    // One transaction of ROWS rows, live.
    await sql.query("SELECT pg_create_logical_replication_slot('recv1', 'pgoutput')");
    await sql.query(
      `INSERT INTO small SELECT ${SNAPSHOT_ROWS} + i, i, 'row ' || i FROM generate_series(1, ${ROWS}) i`,
    );
    t = performance.now();
    cpu = worker.cpuMs();
    expected += ROWS;
    await worker.waitForOffset(expected);
    const oneTx = ROWS / seconds(t);
    const oneTxCpu = worker.cpuMs();
    const recv1 = ROWS / (await recvlogical('recv1', await currentLsn(sql)));
    print(`cdc.e2e.1tx_${ROWS}.worker`, oneTx, 'events/s');
    print(`cdc.e2e.1tx_${ROWS}.pg_recvlogical`, recv1, 'events/s');
    print(`cdc.e2e.1tx_${ROWS}.worker_vs_pg_recvlogical`, (oneTx / recv1) * 100, '%');
    printCpu(`cdc.e2e.1tx_${ROWS}`, 'event', cpu, oneTxCpu, ROWS);

    // TXNS transactions of 10 rows, as a backlog read by a restarted worker.
    await worker.stop();
    const rssFirst = worker.peakRssMb;
    await sql.query("SELECT pg_create_logical_replication_slot('recv2', 'pgoutput')");
    const base = SNAPSHOT_ROWS + ROWS;
    await sql.query(`DO $$ BEGIN FOR k IN 0..${TXNS - 1} LOOP
      INSERT INTO small SELECT ${base} + k * 10 + i, i, 'tx row' FROM generate_series(1, 10) i; COMMIT;
    END LOOP; END $$`);
    const end = await currentLsn(sql);
    worker = await Worker.start();
    const resumed = await worker.waitForLine(/start plan/);
    cpu = worker.cpuMs();
    expected += TXNS * 10;
    await worker.waitForOffset(expected);
    const manyTx = (TXNS * 10) / ((performance.now() - resumed) / 1000);
    const manyTxCpu = worker.cpuMs();
    const recv2 = (TXNS * 10) / (await recvlogical('recv2', end));
    print(`cdc.e2e.${TXNS}tx_10rows.worker`, manyTx, 'events/s');
    print(`cdc.e2e.${TXNS}tx_10rows.pg_recvlogical`, recv2, 'events/s');
    print(`cdc.e2e.${TXNS}tx_10rows.worker_vs_pg_recvlogical`, (manyTx / recv2) * 100, '%');
    printCpu(`cdc.e2e.${TXNS}tx_10rows`, 'event', cpu, manyTxCpu, TXNS * 10);
    await worker.stop();
    print('cdc.e2e.worker_peak_rss', Math.max(rssFirst, worker.peakRssMb), 'MB');
    worker = null;
    for (const s of ['recv1', 'recv2']) await sql.query('SELECT pg_drop_replication_slot($1)', [s]);
    await sql.end();

    function recvlogical(slot: string, endLsn: string): Promise<number> {
      return recvlogicalSeconds(
        { ...cluster, database: db, slot, publication: 'bench_pub' },
        endLsn,
      );
    }
  } finally {
    await worker?.stop().catch(() => undefined);
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The worker as a child process, its output lines timed as they arrive. */
class Worker {
  private readonly lines: Array<{ at: number; text: string }> = [];
  private client: ClusterClient | null = null;
  /** Why the last high-watermark probe failed (the topic not existing yet, usually). */
  private probeError: Error | undefined;
  peakRssMb = 0;
  private readonly rssTimer: NodeJS.Timeout;

  private constructor(private readonly child: ChildProcess) {
    // Logs (pino, stdout) and the CLI's own lines (stderr) both matter.
    for (const stream of [child.stdout!, child.stderr!]) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop()!;
        const at = performance.now();
        for (const text of parts) this.lines.push({ at, text });
        // Only the lines waited for are needed: keep memory flat on long runs.
        if (this.lines.length > 10_000) this.lines.splice(0, 5_000);
      });
    }
    this.rssTimer = setInterval(() => this.sampleRss(), 200);
  }

  static async start(): Promise<Worker> {
    const args = [
      ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []),
      join(repo, 'bin/connect.js'),
      'standalone',
      join(dir, 'worker.properties'),
      join(dir, 'cdc.json'),
    ];
    const w = new Worker(
      spawn(process.execPath, args, {
        cwd: repo,
        env: { ...process.env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const line = await w.waitForLine(/broker listening on [\d.]+:\d+/);
    const bootstrap = /broker listening on ([\d.]+:\d+)/.exec(
      w.lines.find((l) => l.at === line && /broker listening/.test(l.text))!.text,
    )![1];
    w.client = new ClusterClient(bootstrap, { clientId: 'bench-probe' });
    return w;
  }

  /** When the first line matching `pattern` arrived (waits for it). */
  async waitForLine(pattern: RegExp, timeoutMs = 600_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find((l) => pattern.test(l.text));
      if (found) return found.at;
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`worker printed no ${pattern}:\n${this.tail()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async waitForOffset(n: number, timeoutMs = 1_800_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((await this.highWatermark()) >= n) return;
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(
          `topic did not reach ${n} records (last probe error: ${this.probeError?.message}):\n${this.tail()}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The topic's high watermark; -1 while the topic does not exist yet. */
  private async highWatermark(): Promise<number> {
    try {
      const conn = await this.client!.leaderConnection(TOPIC, 0);
      const answer = await conn.request(ApiKey.ListOffsets, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
      });
      const p = ((answer.topics as Message[])[0]!.partitions as Message[])[0]!;
      return p.errorCode === 0 ? Number(p.offset) : -1;
    } catch (e) {
      this.probeError = e as Error;
      return -1;
    }
  }

  /** CPU time (user + system) the worker process has used so far: all threads, and its main thread. */
  cpuMs(): { all: number; main: number } {
    const pid = this.child.pid;
    return {
      all: statCpuMs(`/proc/${pid}/stat`),
      main: statCpuMs(`/proc/${pid}/task/${pid}/stat`),
    };
  }

  private sampleRss(): void {
    try {
      const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      this.peakRssMb = Math.max(this.peakRssMb, kb / 1024);
    } catch {
      // The process is gone: its last sample stands.
    }
  }

  async stop(): Promise<void> {
    this.sampleRss();
    clearInterval(this.rssTimer);
    this.client?.close();
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
  }

  private tail(): string {
    return this.lines
      .slice(-20)
      .map((l) => l.text)
      .join('\n');
  }
}

async function currentLsn(sql: pg.Client): Promise<string> {
  return (await sql.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
}

function seconds(since: number): number {
  return (performance.now() - since) / 1000;
}

/**
 * Fills `gib` GiB of fresh memory in a child process that then exits (see "Fresh
 * memory" above); returns the rate at which it got the memory, in MB/s.
 */
function firstTouchRate(gib: number): number {
  const fill = `const t = performance.now(); const keep = [];
for (let i = 0; i < ${gib * 4}; i++) { const b = Buffer.allocUnsafeSlow(256 << 20); b.fill(1); keep.push(b); }
console.log(${gib * 1024} / ((performance.now() - t) / 1000));`;
  const child = spawnSync(process.execPath, ['-e', fill], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`measuring fresh memory failed: ${child.stderr}`);
  return Number(child.stdout.trim());
}

/** CPU µs per item since `from`, of the whole worker and of its main thread. */
function printCpu(
  prefix: string,
  unit: string,
  from: { all: number; main: number },
  to: { all: number; main: number },
  items: number,
): void {
  print(`${prefix}.worker_cpu_per_${unit}`, ((to.all - from.all) * 1000) / items, 'us');
  print(
    `${prefix}.worker_main_thread_cpu_per_${unit}`,
    ((to.main - from.main) * 1000) / items,
    'us',
  );
}

function print(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value >= 100 ? Math.round(value) : value.toFixed(1)} ${unit}`);
}

// Last, so that the classes above are initialised before it runs.
await main();
