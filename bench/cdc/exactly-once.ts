/**
 * CDC streaming with exactly-once delivery (KIP-618) next to the same stream at-least-once,
 * and next to pg_recvlogical (the limit), in one run on one machine.
 *
 * For each mode a `connect worker` child process (distributed mode, embedded broker,
 * data in a fresh folder) runs the Postgres CDC connector on its own database. Once
 * the connector streams, it is stopped (PUT /stop), BENCH_TXNS transactions of 10
 * rows (default 30,000: 300k change events) are written, and it is resumed: the figure
 * is events/s from the resume until the replication slot's confirmed_flush_lsn passes
 * the last commit. The task confirms a transaction only once the offsets covering it
 * are stored (at-least-once: flushed every offset.flush.interval.ms = 100 ms;
 * exactly-once: committed with the records, one transaction per poll), so both
 * clocks stop at the same point: everything delivered and recorded.
 * Before the resume the backlog's table is vacuumed and a checkpoint is taken, and
 * the modes run in the order at-least-once, exactly-once, exactly-once, at-least-once
 * (each one's figure is the mean of its two runs): a run second on the machine is
 * slower than first (one-way order gave exactly-once 61% with it second, 83% first).
 * pg_recvlogical decodes the same backlog with pgoutput to /dev/null from a slot made
 * just before it was written.
 *
 * BENCH_BATCH sets the connector's max.batch.size (records per poll, so per
 * transaction with the default transaction.boundary=poll); BENCH_BOUNDARY sets
 * transaction.boundary (e.g. interval, with the worker's offset.flush.interval.ms).
 * BENCH_WORKER_NODE_ARGS passes Node flags to the workers (e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof` to see where a mode spends its time); BENCH_REQUESTS=1
 * prints the embedded broker's requests per 1,000 events of each run, by api (from
 * the worker's /metrics), to see the round trips a mode costs. Each exactly-once run
 * also prints its transactions' mean size and commit time (the task's
 * transaction-size-avg and offset-commit-avg-time-ms) and the mean poll time.
 * Run: npx tsx bench/cdc/exactly-once.ts     Prints `name: value unit` lines.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { metricName } from '../../src/connect/metrics/connect-metrics.ts';
import { type PostgresCluster, startPostgres } from '../../test/helpers/postgres.ts';
import { parsePrometheusText, sampleOf } from '../../test/unit/metrics/prometheus-text.ts';
import { statCpuMs } from '../proc-cpu.ts';
import { recvlogicalSeconds } from './pg-recvlogical.ts';

const TXNS = Number(process.env.BENCH_TXNS ?? 30_000);
const EVENTS = TXNS * 10;
const REQUESTS_FAMILY = 'kafka_network_requestmetrics_requests_total';
const repo = fileURLToPath(new URL('../..', import.meta.url));

function print(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value.toFixed(0)} ${unit}`);
}

async function lsnOf(sql: pg.Client, expr: string): Promise<bigint> {
  const r = await sql.query(`SELECT (${expr} - '0/0')::bigint::text AS l`);
  return BigInt(r.rows[0]?.l ?? '0');
}

async function backlog(sql: pg.Client): Promise<void> {
  await sql.query(`
    DO $$ BEGIN
      FOR tx IN 0..${TXNS - 1} LOOP
        INSERT INTO small SELECT g, g FROM generate_series(tx * 10, tx * 10 + 9) g;
        COMMIT;
      END LOOP;
    END $$`);
}

/** The slot's confirmed_flush_lsn; null when there is no such slot. */
async function confirmed(sql: pg.Client, slot: string): Promise<bigint | null> {
  const r = await sql.query(
    `SELECT (confirmed_flush_lsn - '0/0')::bigint::text AS l FROM pg_replication_slots WHERE slot_name = $1`,
    [slot],
  );
  return r.rows.length === 0 ? null : BigInt(r.rows[0].l ?? '0');
}

class Worker {
  private output = '';
  url = '';
  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d) => {
      this.output += d;
    });
    child.stderr?.on('data', (d) => {
      this.output += d;
    });
  }

  static async start(dir: string, exactlyOnce: boolean): Promise<Worker> {
    const overrides = {
      'bootstrap.servers': '',
      'broker.port': '0',
      'broker.data.dir': join(dir, 'broker'),
      listeners: 'http://127.0.0.1:0',
      'plugin.path': join(repo, 'connectors/postgres-cdc'),
      'offset.flush.interval.ms': '100',
      'exactly.once.source.support': exactlyOnce ? 'enabled' : 'disabled',
      'group.initial.rebalance.delay.ms': '0',
      'log.level': 'warn',
    };
    const nodeArgs = process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const args = [...nodeArgs, join(repo, 'bin/connect.js'), 'worker'];
    for (const [k, v] of Object.entries(overrides)) args.push('-o', `${k}=${v}`);
    const w = new Worker(
      spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const m = /REST API on (http:\/\/\S+)/.exec(w.output);
      if (m) {
        w.url = m[1] as string;
        return w;
      }
      if (w.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`worker did not start:\n${w.output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async rest(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }

  private async metrics(): Promise<ReturnType<typeof parsePrometheusText>> {
    const res = await fetch(`${this.url}/metrics`);
    const text = await res.text();
    if (!res.ok) throw new Error(`GET /metrics: ${res.status} ${text}`);
    return parsePrometheusText(text);
  }

  /** The embedded broker's requests answered so far, by api. */
  async requests(): Promise<Map<string, number>> {
    const family = (await this.metrics()).get(REQUESTS_FAMILY);
    if (family === undefined) throw new Error(`/metrics has no ${REQUESTS_FAMILY}`);
    return new Map(family.samples.map((s) => [s.labels.request as string, s.value]));
  }

  /** Metrics of the connector's task 0 from one scrape, as [group, attribute] (connect-metrics.ts names). */
  async taskMetrics(...names: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    const families = await this.metrics();
    const labels = { connector: 'cdc', task: '0' };
    return names.map(([group, attribute]) =>
      sampleOf(families, metricName(group, attribute), labels),
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await new Promise((r) => this.child.once('exit', r));
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 600_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface RunFigures {
  rate: number;
  /** The worker process's CPU (all threads: the task's and the embedded broker's) per event. */
  cpuPerEventUs: number;
  /** Exactly-once: its transactions' mean size and commit time, and the mean poll, as printed. */
  transactions?: string;
}

/** Events/s and worker CPU per event of the CDC connector over the backlog, in one mode. */
async function connectRun(cluster: PostgresCluster, exactlyOnce: boolean): Promise<RunFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-eos-'));
  const db = await cluster.freshDatabase(exactlyOnce ? 'eos' : 'alo');
  const sql = new pg.Client(cluster.connectionConfig(db));
  sql.on('error', () => undefined);
  await sql.connect();
  const worker = await Worker.start(dir, exactlyOnce);
  try {
    await sql.query('CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL)');
    await worker.rest('PUT', '/connectors/cdc/config', {
      'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
      'database.hostname': cluster.host,
      'database.port': String(cluster.port),
      'database.user': cluster.user,
      'database.password': cluster.password,
      'database.dbname': db,
      'topic.prefix': 'bench',
      'slot.name': db,
      'publication.name': db,
      'table.include.list': 'public.small',
      'topic.creation.default.replication.factor': '-1',
      'topic.creation.default.partitions': '1',
      ...(exactlyOnce ? { 'exactly.once.support': 'required' } : {}),
      ...(process.env.BENCH_BATCH ? { 'max.batch.size': process.env.BENCH_BATCH } : {}),
      ...(process.env.BENCH_BOUNDARY ? { 'transaction.boundary': process.env.BENCH_BOUNDARY } : {}),
    });
    const taskRunning = async () => {
      const s = (await worker.rest('GET', '/connectors/cdc/status')) as {
        tasks: Array<{ state: string }>;
      };
      return s.tasks[0]?.state === 'RUNNING';
    };
    await until('the task running', taskRunning);
    await until('the slot', async () => (await confirmed(sql, db)) !== null);
    // One change streamed and its offset stored first: a task that handed nothing on
    // from the slot it made drops it at stop (postgres-cdc-task.ts), and the resume
    // would start over from a new slot past the backlog.
    await sql.query('INSERT INTO small VALUES (-1, -1)');
    const first = await lsnOf(sql, 'pg_current_wal_lsn()');
    await until(
      'the first change confirmed',
      async () => ((await confirmed(sql, db)) ?? 0n) >= first,
    );
    await worker.rest('PUT', '/connectors/cdc/stop');
    // Stopping is asynchronous: a task still streaming would take the backlog early.
    await until('the connector stopped', async () => {
      const s = (await worker.rest('GET', '/connectors/cdc/status')) as {
        connector: { state: string };
        tasks: unknown[];
      };
      return s.connector.state === 'STOPPED' && s.tasks.length === 0;
    });
    await backlog(sql);
    // The backlog's WAL written out and its table vacuumed now, not by a checkpoint or
    // autovacuum in the middle of this run or the next.
    await sql.query('VACUUM ANALYZE small');
    await sql.query('CHECKPOINT');
    const end = await lsnOf(sql, 'pg_current_wal_lsn()');
    if ((await confirmed(sql, db)) === null) throw new Error('the slot was dropped at stop');
    const cpu = `/proc/${worker.child.pid}/stat`;
    const requestsBefore = process.env.BENCH_REQUESTS ? await worker.requests() : undefined;
    const cpuBefore = statCpuMs(cpu);
    const started = performance.now();
    await worker.rest('PUT', '/connectors/cdc/resume');
    await until(
      'the slot confirmed past the backlog',
      async () => ((await confirmed(sql, db)) ?? 0n) >= end,
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuMs = statCpuMs(cpu) - cpuBefore;
    if (requestsBefore !== undefined) {
      const after = await worker.requests();
      const perK = [...after]
        .map(([api, n]) => [api, ((n - (requestsBefore.get(api) ?? 0)) * 1000) / EVENTS] as const)
        .filter(([, n]) => n > 0)
        .map(([api, n]) => `${api}=${n.toFixed(2)}`);
      console.log(
        `requests per 1000 events (${exactlyOnce ? 'exactly-once' : 'at-least-once'}): ${perK.join(' ')}`,
      );
    }
    let transactions: string | undefined;
    if (exactlyOnce) {
      // The task started at the resume, so its windows hold this run's transactions
      // only: their size, and how long one takes to commit (the loop converts the next
      // batch meanwhile, so a commit longer than that is time the stream waits).
      const [size, commit, poll] = (await worker.taskMetrics(
        ['source-task-metrics', 'transaction-size-avg'],
        ['connector-task-metrics', 'offset-commit-avg-time-ms'],
        ['source-task-metrics', 'poll-batch-avg-time-ms'],
      )) as [number, number, number];
      transactions = `${size.toFixed(0)} records, commit ${commit.toFixed(2)} ms, poll ${poll.toFixed(2)} ms`;
    }
    return {
      rate: EVENTS / seconds,
      cpuPerEventUs: (cpuMs * 1000) / EVENTS,
      ...(transactions !== undefined ? { transactions } : {}),
    };
  } finally {
    await worker.stop();
    await sql.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** pg_recvlogical over the same backlog, from a slot made before it was written. */
async function recvlogicalRun(cluster: PostgresCluster): Promise<number> {
  const db = await cluster.freshDatabase('recv');
  const sql = new pg.Client(cluster.connectionConfig(db));
  sql.on('error', () => undefined);
  await sql.connect();
  try {
    await sql.query('CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL)');
    await sql.query('CREATE PUBLICATION recv_pub FOR TABLE small');
    await sql.query("SELECT pg_create_logical_replication_slot('recv', 'pgoutput')");
    await backlog(sql);
    const end = await sql.query('SELECT pg_current_wal_lsn()::text AS l');
    const seconds = await recvlogicalSeconds(
      { ...cluster, database: db, slot: 'recv', publication: 'recv_pub' },
      end.rows[0].l,
    );
    const rate = EVENTS / seconds;
    await sql.query("SELECT pg_drop_replication_slot('recv')");
    return rate;
  } finally {
    await sql.end();
  }
}

async function main(): Promise<void> {
  const cluster = await startPostgres();
  try {
    // A, B, B, A: a run is slower second than first on one machine (its database and
    // WAL come after the other's), so each mode runs once in each place; its figure is
    // the mean of its two runs.
    const runs = { alo: [] as RunFigures[], eos: [] as RunFigures[] };
    for (const exactlyOnce of [false, true, true, false]) {
      const run = await connectRun(cluster, exactlyOnce);
      (exactlyOnce ? runs.eos : runs.alo).push(run);
      const mode = exactlyOnce ? 'exactly_once' : 'at_least_once';
      print(`cdc.eos.streaming.${mode}.run`, run.rate, 'events/s');
      console.log(
        `cdc.eos.streaming.${mode}.run.worker_cpu_per_event: ${run.cpuPerEventUs.toFixed(1)} us`,
      );
      if (run.transactions !== undefined)
        console.log(`cdc.eos.streaming.${mode}.run.transactions: ${run.transactions}`);
    }
    const mean = (xs: RunFigures[], f: (r: RunFigures) => number) =>
      xs.reduce((a, r) => a + f(r), 0) / xs.length;
    const atLeastOnce = mean(runs.alo, (r) => r.rate);
    const exactlyOnce = mean(runs.eos, (r) => r.rate);
    const aloCpu = mean(runs.alo, (r) => r.cpuPerEventUs);
    const eosCpu = mean(runs.eos, (r) => r.cpuPerEventUs);
    const limit = await recvlogicalRun(cluster);
    print('cdc.eos.streaming.at_least_once', atLeastOnce, 'events/s');
    print('cdc.eos.streaming.exactly_once', exactlyOnce, 'events/s');
    print('cdc.eos.streaming.pg_recvlogical', limit, 'events/s');
    console.log(
      `cdc.eos.streaming.exactly_once_vs_at_least_once: ${((100 * exactlyOnce) / atLeastOnce).toFixed(1)} %`,
    );
    // CPU per event is steadier than wall time on a shared machine.
    console.log(`cdc.eos.streaming.at_least_once.worker_cpu_per_event: ${aloCpu.toFixed(1)} us`);
    console.log(`cdc.eos.streaming.exactly_once.worker_cpu_per_event: ${eosCpu.toFixed(1)} us`);
  } finally {
    await cluster.stop();
  }
}

await main();
