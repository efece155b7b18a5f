/**
 * The first minute of a new user (issue 25): a `connect worker` with the shipped
 * config/worker.properties (embedded broker, one worker) and the time
 *   - from POST /connectors of a datagen source to its first record in the topic;
 *   - from POST /connectors of a Parquet sink whose flush.size the topic already
 *     holds to its first committed file.
 * Target: at most 1 s each. The limit printed beside them is a plain round trip:
 * GET / on the same worker.
 *
 * Run: npx tsx bench/connect/first-record.ts [runs, default 3]
 * Prints `name: value unit` lines (medians of the runs).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';

const RUNS = Number(process.argv[2] ?? 3);
const connectBin = fileURLToPath(new URL('../../bin/connect.js', import.meta.url));
const properties = fileURLToPath(new URL('../../config/worker.properties', import.meta.url));
const plugins = ['datagen', 'parquet-sink']
  .map((p) => fileURLToPath(new URL(`../../connectors/${p}`, import.meta.url)))
  .join(',');

interface Worker {
  child: ChildProcess;
  url: string;
  bootstrap: string;
}

function startWorker(dir: string): Promise<Worker> {
  const overrides = {
    listeners: 'http://127.0.0.1:0',
    'broker.port': '0',
    'broker.data.dir': join(dir, 'broker'),
    'plugin.path': plugins,
  };
  const child = spawn(
    process.execPath,
    [
      connectBin,
      'worker',
      properties,
      ...Object.entries(overrides).flatMap(([k, v]) => ['-o', `${k}=${v}`]),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  return new Promise((resolve, reject) => {
    let buffer = '';
    let bootstrap = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (const line of buffer.split('\n')) {
        const broker = /broker listening on (\S+)/.exec(line);
        if (broker) bootstrap = broker[1] as string;
        const ready = /REST API on (http:\/\/\S+)/.exec(line);
        if (ready && bootstrap) resolve({ child, url: ready[1] as string, bootstrap });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('close', () => reject(new Error(`worker exited: ${buffer.slice(-2000)}`)));
  });
}

async function post(w: Worker, name: string, config: Record<string, string>): Promise<void> {
  const res = await fetch(`${w.url}/connectors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, config }),
  });
  if (res.status !== 201) throw new Error(`POST ${name}: ${res.status} ${await res.text()}`);
}

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function run(): Promise<{ source: number; sink: number; rtt: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-first-record-'));
  const w = await startWorker(dir);
  const admin = new Kafka({ brokers: [w.bootstrap], logLevel: logLevel.NOTHING }).admin();
  try {
    await admin.connect();
    const t0 = performance.now();
    await fetch(`${w.url}/`);
    const rtt = performance.now() - t0;

    const t1 = performance.now();
    await post(w, 'gen', {
      'connector.class': 'connect.datagen.DatagenConnector',
      topic: 'orders',
      'records.per.second': '1000',
      'tasks.max': '1',
    });
    await until(async () => {
      try {
        const offsets = await admin.fetchTopicOffsets('orders');
        return offsets.some((o) => Number(o.high) > 0);
      } catch {
        return false;
      }
    });
    const source = performance.now() - t1;

    await until(async () =>
      (await admin.fetchTopicOffsets('orders')).some((o) => Number(o.high) >= 100),
    );
    const lake = join(dir, 'lake');
    const t2 = performance.now();
    await post(w, 'lake', {
      'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
      topics: 'orders',
      'store.url': `file://${lake}`,
      'flush.size': '100',
    });
    const folder = join(lake, 'topics', 'orders');
    const hasFile = (d: string): boolean =>
      existsSync(d) &&
      readdirSync(d, { withFileTypes: true }).some((e) =>
        e.isDirectory() ? hasFile(join(d, e.name)) : e.name.endsWith('.parquet'),
      );
    await until(() => hasFile(folder));
    const sink = performance.now() - t2;
    return { source, sink, rtt };
  } finally {
    await admin.disconnect().catch(() => undefined);
    w.child.kill('SIGINT');
    await new Promise((r) => w.child.once('close', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
for (let i = 0; i < RUNS; i++) results.push(await run());
console.log(
  `first-record.source.post-to-first-record: ${median(results.map((r) => r.source)).toFixed(0)} ms`,
);
console.log(
  `first-record.sink.post-to-first-file: ${median(results.map((r) => r.sink)).toFixed(0)} ms`,
);
console.log(
  `first-record.limit.rest-round-trip: ${median(results.map((r) => r.rtt)).toFixed(1)} ms`,
);
