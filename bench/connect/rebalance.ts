/**
 * Worker cluster failover (issue 6): three `connect worker` processes on one embedded
 * broker (the first runs it), a datagen source with 30 tasks, and the time until every
 * task is RUNNING again, as GET /connectors/{name}/status reports it, after:
 *   - join       the first placement (three fresh workers, connector created);
 *   - leave      one worker stopped with SIGTERM (it stops its tasks, reports them
 *                UNASSIGNED and leaves the group: they move at once);
 *   - rejoin     that worker started again, until the tasks are spread 10/10/10;
 *   - crash      one worker killed with SIGKILL (its tasks wait for session.timeout.ms
 *                and then scheduled.rebalance.max.delay.ms).
 * The limit to compare with is the configuration itself, printed alongside: Kafka
 * Connect's defaults are session.timeout.ms=10000 and up to 300000 ms of scheduled
 * delay for a crashed worker; this runtime's delay default is 30000 ms.
 *
 * Run: npx tsx bench/connect/rebalance.ts [scheduled.rebalance.max.delay.ms] [session.timeout.ms]
 * Prints `name: value unit` lines.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DELAY_MS = Number(process.argv[2] ?? 30_000);
const SESSION_MS = Number(process.argv[3] ?? 10_000);
const TASKS = 30;
const connectBin = fileURLToPath(new URL('../../bin/connect.js', import.meta.url));
const pluginPath = fileURLToPath(new URL('../../connectors/datagen', import.meta.url));

interface Proc {
  child: ChildProcess;
  url: string;
  id: string;
  bootstrap?: string;
  exited: Promise<void>;
}

const alive = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of alive) c.kill('SIGKILL');
});

function startWorker(args: string[]): Promise<Proc> {
  const child = spawn(process.execPath, [connectBin, 'worker', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  alive.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('close', () => {
      alive.delete(child);
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    let bootstrap: string | undefined;
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        const nl = buffer.indexOf('\n');
        if (nl < 0) break;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const broker = /^broker listening on (\S+)/.exec(line);
        if (broker) bootstrap = broker[1];
        const ready = /^worker (\S+) running .*REST API on (\S+)/.exec(line);
        if (ready) resolve({ child, id: ready[1]!, url: ready[2]!, exited, bootstrap });
      }
    };
    child.stdout!.on('data', onData);
    if (process.env.BENCH_LOG) {
      child.stdout!.on('data', (c: Buffer) => process.stderr.write(c));
      child.stderr!.on('data', (c: Buffer) => process.stderr.write(c));
    }
    child.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`worker exited before it was ready: ${buffer}`)));
  });
}

async function tasksByWorker(via: Proc): Promise<Map<string, number> | undefined> {
  try {
    const res = await fetch(`${via.url}/connectors/gen/status`);
    if (res.status !== 200) return undefined;
    const body = (await res.json()) as { tasks: Array<{ state: string; worker_id: string }> };
    if (body.tasks.length !== TASKS || body.tasks.some((t) => t.state !== 'RUNNING'))
      return undefined;
    const counts = new Map<string, number>();
    for (const t of body.tasks) counts.set(t.worker_id, (counts.get(t.worker_id) ?? 0) + 1);
    return counts;
  } catch {
    return undefined;
  }
}

/** ms until every task runs on `on` only (and, if `balanced`, evenly). */
async function until(via: Proc, on: Proc[], balanced: boolean, from: number): Promise<number> {
  const ids = new Set(on.map((p) => p.id));
  for (;;) {
    const counts = await tasksByWorker(via);
    if (
      counts !== undefined &&
      [...counts.keys()].every((id) => ids.has(id)) &&
      (!balanced ||
        (counts.size === on.length && [...counts.values()].every((c) => c === TASKS / on.length)))
    )
      return Date.now() - from;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rebalance-'));
  const common = Object.entries({
    listeners: 'http://127.0.0.1:0',
    'plugin.path': pluginPath,
    'session.timeout.ms': String(SESSION_MS),
    'heartbeat.interval.ms': String(Math.min(3000, Math.floor(SESSION_MS / 3))),
    'scheduled.rebalance.max.delay.ms': String(DELAY_MS),
  }).flatMap(([k, v]) => ['-o', `${k}=${v}`]);
  const procs: Proc[] = [];
  try {
    const w1 = await startWorker([
      ...common,
      ...['-o', 'bootstrap.servers=', '-o', 'broker.host=127.0.0.1', '-o', 'broker.port=0'],
      ...[
        '-o',
        `broker.data.dir=${join(dir, 'broker')}`,
        '-o',
        'group.initial.rebalance.delay.ms=0',
        // Allows session timeouts below the broker's default minimum of 6 s.
        '-o',
        'group.min.session.timeout.ms=500',
      ],
    ]);
    procs.push(w1);
    const joined = [...common, '-o', `bootstrap.servers=${w1.bootstrap}`];
    let w2 = await startWorker(joined);
    procs.push(w2);
    let w3 = await startWorker(joined);
    procs.push(w3);

    let t = Date.now();
    const created = await fetch(`${w1.url}/connectors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'gen',
        config: {
          'connector.class': 'DatagenConnector',
          'tasks.max': String(TASKS),
          topic: 'gen',
          'records.per.second': '1',
        },
      }),
    });
    if (created.status !== 201) throw new Error(`create failed: ${await created.text()}`);
    console.log(`join_create_to_all_running: ${await until(w1, [w1, w2, w3], true, t)} ms`);

    t = Date.now();
    w3.child.kill('SIGTERM');
    const leave = await until(w1, [w1, w2], false, t);
    console.log(`clean_leave_to_all_running: ${leave} ms`);
    await w3.exited;

    t = Date.now();
    w3 = await startWorker(joined);
    procs.push(w3);
    const ready = Date.now() - t;
    console.log(`rejoin_process_start_to_ready: ${ready} ms`);
    console.log(`rejoin_process_start_to_balanced: ${await until(w1, [w1, w2, w3], true, t)} ms`);

    t = Date.now();
    w2.child.kill('SIGKILL');
    console.log(`crash_to_all_running: ${await until(w1, [w1, w3], false, t)} ms`);
    console.log(`crash_limit_session_plus_delay: ${SESSION_MS + DELAY_MS} ms`);
    console.log(`kafka_connect_default_crash_limit: ${10_000 + 300_000} ms`);
    await w2.exited;
    w2 = await startWorker(joined);
    procs.push(w2);
  } finally {
    for (const p of procs.reverse()) {
      if (!alive.has(p.child)) continue;
      p.child.kill('SIGTERM');
      await p.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
