/**
 * The BullMQ sink end to end (issue 22): jobs/s from a topic of CDC events into BullMQ,
 * as `connect standalone` runs it (embedded broker, group consumer, JsonConverter,
 * BullMQSinkTask with its one transaction per batch), next to the limit measured in
 * the same run: a bare Queue.addBulk loop adding the same jobs from memory.
 *
 * Both write to a private redis-server started here (no persistence), so its CPU time
 * (/proc/<pid>/stat) is theirs alone: the lines give Redis CPU per job for both. The
 * worker's peak RSS (VmHWM) includes the embedded broker in the same process; with
 * BENCH_BROKER=process the broker runs as a process of its own (`connect broker`), the
 * worker points at it, and each one's peak RSS is printed, so the sink's share shows.
 *
 * The sink's time runs from creating the connector (REST) to the group's commit of the
 * topic's end offset, found by polling: it includes starting the task and joining the
 * group, so on a small run it understates the steady rate. The topic is produced first
 * (BENCH_EVENTS Debezium-shaped events, schemaless JSON, default 200,000).
 *
 * ordering=key is measured next to ordering=none on the same topic: a second sink
 * connector with ordering=key (its key sets written in the same transactions) into its
 * own queue, then both queues drained with concurrency 10, ordering=none's by a plain
 * Worker and ordering=key's by a KeyOrderedWorker (a look before each job, a release
 * after it). Every event has its own key, so no job waits for another: the figures are
 * the bookkeeping's cost, not the waiting a busy key adds.
 *
 * Run: npx tsx bench/bullmq/sink-throughput.ts [events]   (BENCH_BROKER=process: apart)
 * Prints `name: value unit` lines.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, Worker, type WorkerOptions } from 'bullmq';
import { Kafka, logLevel } from 'kafkajs';
import { KeyOrderedWorker } from '../../connectors/bullmq-sink/key-ordered-worker.ts';
import { statCpuMs } from '../proc-cpu.ts';

const EVENTS = Number(process.argv[2] ?? process.env.BENCH_EVENTS ?? 200_000);
const TOPIC = 'bench.public.orders';
/** `embedded` (default): the broker in the worker's process; `process`: one of its own. */
const BROKER = process.env.BENCH_BROKER ?? 'embedded';
if (BROKER !== 'embedded' && BROKER !== 'process') {
  throw new Error(`BENCH_BROKER must be embedded or process, not ${BROKER}`);
}
const root = fileURLToPath(new URL('../..', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A process's peak resident set (VmHWM), in KiB. */
function peakRssKb(pid: number | undefined): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

/** Everything a child printed so far, and a wait for a line of it. */
function outputOf(child: ReturnType<typeof spawn>) {
  let text = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (d: Buffer) => {
      text += d.toString('utf8');
    });
  }
  return async (pattern: RegExp): Promise<string> => {
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`worker exited: ${text.slice(-2000)}`);
        return pattern.test(text);
      },
      String(pattern),
      60_000,
    );
    return pattern.exec(text)![0];
  };
}

async function until(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 600_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function event(i: number) {
  return {
    before: null,
    after: { id: i, customer_id: i % 1000, status: 'new', amount: 1999, note: 'bench order' },
    source: {
      connector: 'postgresql',
      name: 'bench',
      db: 'bench',
      schema: 'public',
      table: 'orders',
      lsn: 1000 + i,
    },
    op: 'c',
    ts_ms: 1_700_000_000_000 + i,
  };
}

/** Drain `queue` (EVENTS jobs) with a worker of `kind` at concurrency 10: ms taken. */
async function drain(
  kind: new (name: string, processor: () => Promise<void>, opts: WorkerOptions) => Worker,
  queue: string,
  redisPort: number,
): Promise<number> {
  let completed = 0;
  const t0 = performance.now();
  const worker = new kind(queue, async () => {}, {
    connection: { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null },
    concurrency: 10,
  });
  worker.on('completed', () => {
    completed++;
  });
  worker.on('error', (e: Error) => console.log(`# worker error: ${e.message}`));
  try {
    await until(async () => completed >= EVENTS, `${queue} drained`);
    return performance.now() - t0;
  } finally {
    await worker.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bullmq-'));
  const redisPort = await freePort();
  const redis = spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const worker = {
    child: undefined as ReturnType<typeof spawn> | undefined,
    broker: undefined as ReturnType<typeof spawn> | undefined,
  };
  try {
    console.log('# starting redis-server');
    // A TCP probe: a BullMQ Queue on a Redis not yet listening would wait forever.
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port: redisPort });
          socket.once('connect', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(false));
        }),
      'redis-server',
    );
    const redisCpu = () => statCpuMs(`/proc/${redis.pid}/stat`);

    // The worker needs a connector to start: an idle BullMQ source on an empty queue.
    const brokerKeys = [
      'broker.host=127.0.0.1',
      'broker.port=0',
      `broker.data.dir=${join(dir, 'broker')}`,
      'offsets.topic.num.partitions=1',
      'group.initial.rebalance.delay.ms=0',
    ];
    let apartBootstrap = '';
    if (BROKER === 'process') {
      const brokerProps = join(dir, 'broker.properties');
      writeFileSync(brokerProps, `${brokerKeys.join('\n')}\n`);
      worker.broker = spawn(
        process.execPath,
        [join(root, 'bin/connect.js'), 'broker', brokerProps],
        {
          cwd: root,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const line = await outputOf(worker.broker)(/broker listening on [\d.]+:\d+/);
      apartBootstrap = /([\d.]+:\d+)/.exec(line)![1]!;
    }
    const props = join(dir, 'worker.properties');
    writeFileSync(
      props,
      [
        ...(BROKER === 'process'
          ? [`bootstrap.servers=${apartBootstrap}`]
          : ['bootstrap.servers=', ...brokerKeys]),
        'listeners=http://127.0.0.1:0',
        `plugin.path=${join(root, 'connectors/bullmq-sink')}`,
        `offset.storage.file.filename=${join(dir, 'connect.offsets')}`,
        'offset.flush.interval.ms=200',
        '',
      ].join('\n'),
    );
    const idle = join(dir, 'idle.json');
    writeFileSync(
      idle,
      JSON.stringify({
        name: 'idle',
        config: {
          'connector.class': 'BullMQSourceConnector',
          'redis.port': String(redisPort),
          'queue.name': 'idle',
          topic: 'idle-events',
        },
      }),
    );
    const child = spawn(
      process.execPath,
      [join(root, 'bin/connect.js'), 'standalone', props, idle],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    worker.child = child;
    const waitForLine = outputOf(child);
    const bootstrap =
      BROKER === 'process'
        ? apartBootstrap
        : /([\d.]+:\d+)/.exec(await waitForLine(/broker listening on [\d.]+:\d+/))![1]!;
    const restLine = await waitForLine(/REST API on http:\/\/[\d.]+:\d+/);
    const restUrl = /(http:\/\/[\d.]+:\d+)/.exec(restLine)![1]!;

    console.log('# worker up; producing');
    const kafka = new Kafka({
      clientId: 'bench-bullmq',
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < EVENTS; i += 2000) {
      const n = Math.min(2000, EVENTS - i);
      await producer.send({
        topic: TOPIC,
        messages: Array.from({ length: n }, (_, k) => ({
          key: JSON.stringify({ id: i + k }),
          value: JSON.stringify(event(i + k)),
        })),
      });
    }
    await producer.disconnect();

    console.log('# produced; creating the sink');
    /** Create sink connector `name` with `extra` keys; its time to commit the end offset and Redis CPU. */
    const runSink = async (name: string, extra: Record<string, string>) => {
      const cpu0 = redisCpu();
      const t0 = performance.now();
      const created = await fetch(`${restUrl}/connectors`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name,
          config: {
            'connector.class': 'BullMQSinkConnector',
            topics: TOPIC,
            'redis.port': String(redisPort),
            'queue.name': 'cdc-${table}',
            'job.name': '${value.op}',
            'job.data': 'after',
            'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
            'key.converter.schemas.enable': 'false',
            'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
            'value.converter.schemas.enable': 'false',
            'errors.retry.timeout': '-1',
            ...extra,
          },
        }),
      });
      if (created.status !== 201)
        throw new Error(`create: ${created.status} ${await created.text()}`);
      await until(async () => {
        const [t] = await admin.fetchOffsets({ groupId: `connect-${name}`, topics: [TOPIC] });
        return Number(t?.partitions[0]?.offset ?? -1) >= EVENTS;
      }, `the sink ${name} to commit the end offset`);
      const ms = performance.now() - t0;
      const cpu = redisCpu() - cpu0;
      const queue = extra['queue.name'] ?? 'cdc-orders';
      const check = new Queue(queue, { connection: { host: '127.0.0.1', port: redisPort } });
      const jobs = await check.count();
      await check.close();
      if (jobs !== EVENTS)
        throw new Error(`the sink ${name} made ${jobs} jobs, expected ${EVENTS}`);
      return { ms, cpu };
    };
    const { ms: sinkMs, cpu: sinkRedisCpu } = await runSink('jobs', {});
    console.log('# sink done; bare loop');
    const rssKb = peakRssKb(child.pid);
    const brokerRssKb = worker.broker === undefined ? 0 : peakRssKb(worker.broker.pid);

    // The limit: the same jobs (name, data, id, options) from memory, addBulk per 1000.
    const bare = new Queue('bare-orders', { connection: { host: '127.0.0.1', port: redisPort } });
    await bare.waitUntilReady();
    const jobs = Array.from({ length: EVENTS }, (_, i) => ({
      name: 'c',
      data: event(i).after,
      opts: { jobId: `${TOPIC}-0-${i}`, attempts: 1, removeOnComplete: false, removeOnFail: false },
    }));
    const cpu1 = redisCpu();
    const t1 = performance.now();
    for (let i = 0; i < jobs.length; i += 1000) await bare.addBulk(jobs.slice(i, i + 1000));
    const bareMs = performance.now() - t1;
    const bareRedisCpu = redisCpu() - cpu1;
    await bare.close();

    console.log('# sink with ordering=key');
    const { ms: keySinkMs, cpu: keySinkRedisCpu } = await runSink('jobs-by-key', {
      ordering: 'key',
      'queue.name': 'keyed-orders',
    });
    await admin.disconnect();
    console.log('# draining with a Worker and a KeyOrderedWorker');
    const drainMs = await drain(Worker, 'cdc-orders', redisPort);
    const keyDrainMs = await drain(KeyOrderedWorker, 'keyed-orders', redisPort);

    const sinkRate = EVENTS / (sinkMs / 1000);
    const bareRate = EVENTS / (bareMs / 1000);
    const keySinkRate = EVENTS / (keySinkMs / 1000);
    const drainRate = EVENTS / (drainMs / 1000);
    const keyDrainRate = EVENTS / (keyDrainMs / 1000);
    console.log(`events: ${EVENTS} records`);
    console.log(`sink.rate: ${sinkRate.toFixed(0)} jobs/s`);
    console.log(`bare.addBulk.rate: ${bareRate.toFixed(0)} jobs/s`);
    console.log(`sink.vs.bare: ${((100 * sinkRate) / bareRate).toFixed(1)} %`);
    console.log(`sink.redis.cpu.per.job: ${((1000 * sinkRedisCpu) / EVENTS).toFixed(2)} us`);
    console.log(`bare.redis.cpu.per.job: ${((1000 * bareRedisCpu) / EVENTS).toFixed(2)} us`);
    console.log(`sink.ordering.key.rate: ${keySinkRate.toFixed(0)} jobs/s`);
    console.log(`sink.ordering.key.vs.none: ${((100 * keySinkRate) / sinkRate).toFixed(1)} %`);
    console.log(
      `sink.ordering.key.redis.cpu.per.job: ${((1000 * keySinkRedisCpu) / EVENTS).toFixed(2)} us`,
    );
    console.log(`worker.ordering.none.rate: ${drainRate.toFixed(0)} jobs/s`);
    console.log(`worker.ordering.key.rate: ${keyDrainRate.toFixed(0)} jobs/s`);
    console.log(`worker.ordering.key.vs.none: ${((100 * keyDrainRate) / drainRate).toFixed(1)} %`);
    console.log(`broker: ${BROKER}`);
    console.log(`worker.rss.peak: ${(rssKb / 1024).toFixed(0)} MB`);
    if (worker.broker !== undefined)
      console.log(`broker.rss.peak: ${(brokerRssKb / 1024).toFixed(0)} MB`);
  } finally {
    worker.child?.kill('SIGKILL');
    worker.broker?.kill('SIGKILL');
    redis.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
