/**
 * The Parquet sink end to end through the runtime (issue 8): rows/s from a topic to
 * finished Parquet files, as `connect standalone` runs it (embedded broker on its own
 * thread, the standalone worker with a WorkerSinkTask on the main thread: the group
 * consumer -> JsonConverter with schemas -> ParquetSinkTask -> files), to the local
 * store and to S3 (s3rver on loopback, in a process of its own as a real S3 would not
 * share the worker's event loop), next to DuckDB writing the same rows to Parquet
 * (snappy, 2 threads, from NDJSON) in the same run.
 *
 * Each kind of sink run is made BENCH_REPEATS times (default 3), each just after
 * DuckDB's best of three, and each `#` line gives that pair: the rates of both drift
 * by tens of percent within minutes on a shared two-core machine, so a ratio compares
 * two measurements made under the same load. The lines give the medians: of the
 * sink's rates, of the pairs' ratios, of CPU per row; `duckdb.snappy.rate`, last, is
 * the median of every DuckDB measurement.
 *
 * Rows are CDC-shaped flat rows (what ExtractNewRecordState makes of Debezium events)
 * in JsonConverter's {"schema", "payload"} form. The runs of a form share one topic,
 * produced before the first of them starts its worker: WARMUP_ROWS rows (BENCH_WARMUP,
 * default 200,000), then the ROWS rows DuckDB writes; each run reads it from the start
 * in a group of its own. The process has the V8 settings `connect` gives a
 * worker (bin/v8-flags.js).
 *
 * A run is timed in steady state, as a worker's tasks run for days: between the
 * group's first commit past the warm-up and its commit of the topic's end offset, over
 * the rows in between. The sink commits only rows in durable files, so that is rows
 * per second into finished files. Both ends are seen the same way (a commit, found by
 * polling), so their delays cancel. Each run starts a worker of its own and writes to a
 * store location of its own (the sink resumes from what its store holds). The warm-up
 * prints its own `#` line: its rate includes starting the task, loading the plugin and
 * V8 optimizing the whole path, which on 300k rows was a third of the CPU. (Timing from a pause after the warm-up,
 * with the timed rows produced meanwhile, was no steady state: the collection after
 * producing a million rows in this process dropped objects the sink's optimized code
 * depended on, and V8 optimized it again inside the timed run.) DuckDB, for its part,
 * counts its best of three. BENCH_WARMUP=0 times the cold run instead: from resuming
 * the connector (created paused: registered, no task yet) to its last commit.
 *
 * The last two kinds send the same rows as plain JSON (schemas.enable=false, the sink
 * infers the schema), to the local store and to S3: the difference to the first two
 * is the cost of the inline schema. Their values are byte for byte the NDJSON lines
 * DuckDB reads.
 *
 * Besides rows/s, each run prints the CPU time per row the whole process spent
 * (broker, worker, Parquet encoder and V8's helper threads) and, on Linux, the main
 * thread's alone: on a shared machine these vary much less than the rates, and the
 * main thread (consumer, converter, sink) is the one the rate depends on.
 *
 * Run: npx tsx bench/parquet-sink/end-to-end.ts [rows]   (or BENCH_ROWS=rows; default 300,000)
 *      It runs the compiled build when dist/ is fresh (`npm run build`), as `connect`
 *      does, and says which with a `# runtime:` line; BENCH_FROM_SOURCE=1 runs src/.
 *      BENCH_FETCH_BYTES=8388608 ... sets consumer.max.partition.fetch.bytes (default 1 MiB)
 *      BENCH_RUNS=local,s3,schemaless,schemaless-s3 ... the sink runs to do (default all four)
 *      BENCH_REPEATS=3 ... runs of each kind, each paired with a DuckDB measurement
 *      BENCH_CPU_PROF=dir ... writes a CPU profile of the main thread over each timed
 *        sink run (the span the rate is timed over) into dir, one per run;
 *        `node --cpu-prof` would also profile producing the topic and DuckDB
 *      BENCH_THREADS=1 ... prints each thread's CPU ms over each run (`# ...` lines)
 * Prints `name: value unit` lines.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DuckDBInstance } from '@duckdb/node-api';
import { type Admin, Kafka, logLevel, type Message } from 'kafkajs';
import { buildIsFresh } from '../../bin/build-freshness.js';
import { applyWorkerV8Flags } from '../../bin/v8-flags.js';
import { statCpuMs } from '../proc-cpu.ts';

/**
 * The runtime as `connect` runs it: the compiled build in dist/ when it is fresh (as
 * bin/connect.js decides), else the sources through tsx. Run from the sources, the
 * encoder thread compiles its modules through tsx while the clock runs (about 0.2 s
 * of CPU on this machine), which users of the build never pay.
 * BENCH_FROM_SOURCE=1 runs the sources anyway.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMPILED =
  process.env.BENCH_FROM_SOURCE !== '1' &&
  buildIsFresh(ROOT) &&
  existsSync(join(ROOT, 'dist/src/cli.js'));
const runtime = (path: string) => (COMPILED ? `../../dist/src/${path}.js` : `../../src/${path}.ts`);
const { startBrokerThread } = (await import(
  runtime('broker/broker-thread')
)) as typeof import('../../src/broker/broker-thread.ts');
const { loadConfig } = (await import(
  runtime('config/load')
)) as typeof import('../../src/config/load.ts');
const { standaloneWorkerDefs, workerPassthroughPrefixes } = (await import(
  runtime('config/worker-config')
)) as typeof import('../../src/config/worker-config.ts');
const { JsonConverter } = (await import(
  runtime('connect/converters/json-converter')
)) as typeof import('../../src/connect/converters/json-converter.ts');
const { startStandaloneWorker } = (await import(
  runtime('connect/runtime/standalone-worker')
)) as typeof import('../../src/connect/runtime/standalone-worker.ts');

const ROWS = Number(process.argv[2] ?? process.env.BENCH_ROWS ?? 300_000);
/** Rows each run sinks before it is timed (a multiple of FLUSH_SIZE, or 0 for none). */
const WARMUP_ROWS = Number(process.env.BENCH_WARMUP ?? 200_000);
/** Rows per file: only whole files are committed, so ROWS must be a multiple of it. */
const FLUSH_SIZE = 100_000;
if (!Number.isInteger(ROWS) || ROWS <= 0 || ROWS % FLUSH_SIZE !== 0) {
  throw new Error(
    `rows must be a positive multiple of flush.size ${FLUSH_SIZE} (the sink commits whole files only), not ${ROWS}`,
  );
}
if (!Number.isInteger(WARMUP_ROWS) || WARMUP_ROWS < 0 || WARMUP_ROWS % FLUSH_SIZE !== 0) {
  throw new Error(
    `BENCH_WARMUP must be 0 or a multiple of flush.size ${FLUSH_SIZE}, not ${WARMUP_ROWS}`,
  );
}
const TOPIC = 'shop.public.orders';
/** The same rows without the schema envelope (schemas.enable=false, inferred schema). */
const SCHEMALESS_TOPIC = 'orders-schemaless';
const RUNS = new Set((process.env.BENCH_RUNS ?? 'local,s3,schemaless,schemaless-s3').split(','));
const CPU_PROF = process.env.BENCH_CPU_PROF;
/** Sink runs of each kind (BENCH_REPEATS, default 3): the medians are printed. */
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
if (!Number.isInteger(REPEATS) || REPEATS < 1) {
  throw new Error(`BENCH_REPEATS must be a positive integer, not ${process.env.BENCH_REPEATS}`);
}
/** Print each thread's CPU time over a sink run (BENCH_THREADS=1). */
const THREADS = process.env.BENCH_THREADS === '1';
const STATUSES = ['NEW', 'PAID', 'SHIPPED', 'DELIVERED', 'CANCELLED'];
const T0 = Date.UTC(2026, 10, 1);

const schema = {
  type: 'struct',
  optional: false,
  name: 'shop.public.orders.Value',
  fields: [
    { field: 'id', type: 'int64', optional: false },
    { field: 'customer_id', type: 'int32', optional: false },
    { field: 'status', type: 'string', optional: false },
    { field: 'amount', type: 'double', optional: false },
    { field: 'note', type: 'string', optional: true },
    {
      field: 'updated_at',
      type: 'int64',
      optional: false,
      name: 'org.apache.kafka.connect.data.Timestamp',
      version: 1,
    },
    { field: '__op', type: 'string', optional: false },
    { field: '__deleted', type: 'boolean', optional: false },
  ],
};

function payloads(n: number): Array<Record<string, unknown>> {
  let s = 0x2545f491;
  const rnd = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, (_, i) => {
    const op = rnd() < 0.7 ? 'c' : rnd() < 0.9 ? 'u' : 'd';
    return {
      id: 1_000_000 + i,
      customer_id: Math.floor(rnd() * 50_000),
      status: STATUSES[Math.floor(rnd() * STATUSES.length)],
      amount: Math.round(rnd() * 100_000) / 100,
      note: `note ${Math.floor(rnd() * 1000)}`,
      updated_at: T0 + i * 37,
      __op: op,
      __deleted: op === 'd',
    };
  });
}

function line(name: string, value: number, unit: string): void {
  console.log(`${name}: ${Number.isInteger(value) ? value : value.toFixed(3)} ${unit}`);
}

/**
 * Bytes of the Parquet files under `dir` (names ending in `suffix`) whose start offset
 * (`<topic>+<partition>+<start offset>.parquet`) is `fromOffset` or more.
 */
function folderBytes(dir: string, suffix = '.parquet', fromOffset = 0): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith(suffix)) continue;
    const start = /\+(\d+)\.parquet/.exec(e.name);
    if (start === null || Number(start[1]) < fromOffset) continue;
    total += statSync(join(e.parentPath, e.name)).size;
  }
  return total;
}

async function produceAll(
  kafka: Kafka,
  topic: string,
  rows: Array<Record<string, unknown>>,
  withSchema: boolean,
): Promise<number> {
  const producer = kafka.producer();
  await producer.connect();
  let bytes = 0;
  try {
    let batch: Message[] = [];
    let batchBytes = 0;
    const sends: Array<Promise<unknown>> = [];
    for (const payload of rows) {
      const value = JSON.stringify(withSchema ? { schema, payload } : payload);
      bytes += value.length;
      batch.push({ value, timestamp: String(payload.updated_at) });
      batchBytes += value.length;
      // Under the broker's 1 MB message.max.bytes; a few sends in flight.
      if (batchBytes > 900_000) {
        sends.push(producer.send({ topic, acks: 1, messages: batch }));
        batch = [];
        batchBytes = 0;
        if (sends.length >= 4) await Promise.all(sends.splice(0));
      }
    }
    if (batch.length > 0) sends.push(producer.send({ topic, acks: 1, messages: batch }));
    await Promise.all(sends);
  } finally {
    await producer.disconnect();
  }
  return bytes;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface SinkRun {
  /** Rows timed: those after the warm-up, less any the first commit point already held. */
  rows: number;
  /** ms between the two commit points (see runSink). */
  ms: number;
  /** CPU ms of the whole process (every thread: broker, worker, encoder) meanwhile. */
  cpuMs: number;
  /** CPU ms of the main thread (consumer, converter, sink) meanwhile. */
  mainMs: number;
  /** CPU ms of the store's own process (s3rver) meanwhile, when it has one. */
  storeCpuMs: number;
}

const inputTopics = new Map<boolean, Promise<string>>();

/**
 * The topic of the runs of one form (JsonConverter's schema envelope, or plain JSON):
 * WARMUP_ROWS rows, then the ROWS timed ones (DuckDB's rows). Made and produced once,
 * by the first run that needs it; every run reads it from the start in a group of its
 * own. Prints the bytes of the timed rows' values.
 */
function inputTopic(admin: Admin, kafka: Kafka, withSchema: boolean): Promise<string> {
  let made = inputTopics.get(withSchema);
  if (made === undefined) {
    made = (async () => {
      const topic = withSchema ? TOPIC : SCHEMALESS_TOPIC;
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      if (WARMUP_ROWS > 0) await produceAll(kafka, topic, payloads(WARMUP_ROWS), withSchema);
      const bytes = await produceAll(kafka, topic, payloads(ROWS), withSchema);
      line(withSchema ? 'topic.value_bytes' : 'topic.schemaless.value_bytes', bytes, 'bytes');
      return topic;
    })();
    inputTopics.set(withSchema, made);
  }
  return made;
}

/**
 * Runs one sink connector over the topic of its form (inputTopic), produced before
 * the worker starts.
 *
 * With a warm-up, the run is timed between two commits of the group: the first that
 * covers the warm-up (offset c0 >= WARMUP_ROWS; the sink commits whole files, and
 * WARMUP_ROWS is a multiple of flush.size) and the one of the topic's end, over the
 * rows between them. That is the rate of a task that has been running, as a worker's
 * tasks run for days: no task start, no code V8 has yet to optimize. (Timing from a
 * pause instead, with the timed rows produced meanwhile, counted V8 optimizing the
 * sink's code again: the collection after producing a million rows drops objects
 * optimized code depends on.) Both ends are seen the same way (a commit, seen by
 * polling), so their delays cancel.
 *
 * Without a warm-up (BENCH_WARMUP=0), the connector is created paused (registered, no
 * task yet) and the run is timed from resuming it, task start and group join included
 * (milliseconds: this broker has no initial rebalance delay).
 *
 * CPU times are those of the same span: they vary less than the rate when other work
 * shares the machine.
 */
async function runSink(
  admin: Admin,
  kafka: Kafka,
  config: Record<string, unknown>,
  name: string,
  store: Record<string, string>,
  withSchema: boolean,
  fileBytes: (topic: string, fromOffset: number) => number,
  storePid?: number,
): Promise<SinkRun & { bytes: number }> {
  const topic = await inputTopic(admin, kafka, withSchema);
  // The bench's own garbage (its rows, DuckDB's results, the last run) is collected
  // now rather than inside the timed run.
  collectGarbage();
  const worker = await startStandaloneWorker({ config });
  try {
    await worker.herder.putConnectorConfig(
      name,
      {
        name,
        'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
        topics: topic,
        'flush.size': String(FLUSH_SIZE),
        'parquet.codec': 'snappy',
        'partitioner.class': 'io.confluent.connect.storage.partitioner.DefaultPartitioner',
        ...store,
      },
      false,
      'PAUSED',
    );
    const group = `connect-${name}`;
    const committed = async () => {
      const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      return Number(t?.partitions[0]?.offset);
    };
    const end = WARMUP_ROWS + ROWS;
    // Started paused and resumed here: a connector created running starts its task
    // before this thread (which runs the sink too) sees that it did.
    const resumed = performance.now();
    await worker.herder.resumeConnector(name);
    let from = 0;
    if (WARMUP_ROWS > 0) {
      await until(async () => {
        from = await committed();
        return from >= WARMUP_ROWS;
      }, `${group} warmed up`);
      const warmMs = performance.now() - resumed;
      console.log(
        `# ${name} warm-up: ${from} rows at ${Math.round((from / warmMs) * 1000)} rows/s (task start included)`,
      );
    }
    const profiler = CPU_PROF ? await startProfile() : undefined;
    const cpu = process.cpuUsage();
    const threadsBefore = threadCpuMs();
    const storeCpu = () => (storePid === undefined ? 0 : statCpuMs(`/proc/${storePid}/stat`));
    const storeBefore = storeCpu();
    const start = WARMUP_ROWS > 0 ? performance.now() : resumed;
    await until(async () => (await committed()) === end, `${group} committed ${end}`);
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const threadsAfter = threadCpuMs();
    const storeCpuMs = storeCpu() - storeBefore;
    const mainMs =
      (threadsAfter.get(process.pid)?.ms ?? 0) - (threadsBefore.get(process.pid)?.ms ?? 0);
    if (THREADS) {
      for (const [tid, t] of threadsAfter) {
        const ms = t.ms - (threadsBefore.get(tid)?.ms ?? 0);
        if (ms > 0) console.log(`# ${name} thread ${tid} ${t.name}: ${ms} ms`);
      }
    }
    if (profiler && CPU_PROF) await profiler.stop(join(CPU_PROF, `${name}.cpuprofile`));
    return {
      rows: end - from,
      ms,
      cpuMs: (used.user + used.system) / 1000,
      mainMs,
      storeCpuMs,
      bytes: fileBytes(topic, WARMUP_ROWS),
    };
  } finally {
    await worker.stop();
  }
}

/**
 * CPU ms per thread of this process, by thread id, from /proc (Linux; empty
 * elsewhere): the main thread's id is the process id.
 */
function threadCpuMs(): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  const tasks = `/proc/${process.pid}/task`;
  if (!existsSync(tasks)) return out;
  for (const tid of readdirSync(tasks)) {
    try {
      const ms = statCpuMs(`${tasks}/${tid}/stat`);
      const name = readFileSync(`${tasks}/${tid}/comm`, 'utf8').trim();
      out.set(Number(tid), { name, ms });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** The inspector's sampling profiler on this (the main) thread. */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  if (process.env.BENCH_HEAP_PROF === '1') {
    // Where the main thread allocates, short-lived objects included.
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return {
      async stop(file) {
        const { profile } = await session.post('HeapProfiler.stopSampling');
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(profile));
        session.disconnect();
      },
    };
  }
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * JsonConverter alone over the same values (what the runner does per record before
 * put): the share of the end-to-end time the converter accounts for.
 */
function converterMs(rows: Array<Record<string, unknown>>): number {
  const values = rows.map((payload) => Buffer.from(JSON.stringify({ schema, payload })));
  const json = new JsonConverter();
  json.configure({ 'schemas.enable': 'true' }, false);
  const start = performance.now();
  for (const v of values) json.toConnectData(TOPIC, v);
  return performance.now() - start;
}

/** DuckDB runs before each sink run; the fastest counts (the comparison the sink can only lose). */
const DUCKDB_RUNS = 3;

/** The bench's rows as NDJSON, the input DuckDB reads: written once. */
function writeNdjson(dir: string, rows: Array<Record<string, unknown>>): string {
  const ndjson = join(dir, 'rows.ndjson');
  writeFileSync(ndjson, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return ndjson;
}

/**
 * DuckDB (2 threads) reading the rows as NDJSON and writing snappy Parquet: the best
 * of DUCKDB_RUNS runs, each timed from the COPY statement to its end. One run of a
 * few hundred milliseconds swung 1.3-2.3M rows/s on this machine.
 */
async function duckdb(ndjson: string, out: string) {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < DUCKDB_RUNS; run++) {
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    const conn = await instance.connect();
    const start = performance.now();
    try {
      await conn.run(
        `COPY (SELECT id, customer_id, status, amount, note, make_timestamp(updated_at * 1000) AS updated_at,
                      __op, __deleted
               FROM read_json('${ndjson}', format='newline_delimited', columns={
          id: 'BIGINT', customer_id: 'INTEGER', status: 'VARCHAR', amount: 'DOUBLE', note: 'VARCHAR',
          updated_at: 'BIGINT', __op: 'VARCHAR', __deleted: 'BOOLEAN'}))
         TO '${out}' (FORMAT parquet, COMPRESSION snappy)`,
      );
      best = Math.min(best, performance.now() - start);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  }
  return { rate: Math.round((ROWS / best) * 1000), bytes: statSync(out).size };
}

/** The middle value (the mean of the middle two for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

// The worker runs in this process: with the V8 settings bin/connect.js gives it.
applyWorkerV8Flags();

/** A full collection, through V8's gc() made available at run time. */
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** Runs `use` on the bench's rows, made here and dropped when it returns. */
function withRows<T>(use: (rows: Array<Record<string, unknown>>) => Promise<T>): Promise<T> {
  return use(payloads(ROWS));
}

/** s3rver in its own process (s3rver-process.ts), stopped by closing its stdin. */
async function startS3Process(bucket: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./s3rver-process.ts', import.meta.url)), bucket],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const info = JSON.parse(first) as {
    endpoint: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
    directory: string;
  };
  return {
    ...info,
    pid: child.pid as number,
    async stop() {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'parquet-e2e-'));
const s3 = await startS3Process('bench');
const broker = await startBrokerThread({
  host: '127.0.0.1',
  port: 0,
  dataDir: join(dir, 'broker'),
  nodeId: 1,
  config: { 'offsets.topic.num.partitions': 4, 'group.initial.rebalance.delay.ms': 0 },
});
const bootstrap = `127.0.0.1:${broker.port}`;
const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
try {
  console.log(`# runtime: ${COMPILED ? 'dist/ (compiled build)' : 'src/ through tsx'}`);
  line('rows', ROWS, 'rows');
  // What needs the rows themselves runs first, in a function, so that they are garbage
  // before the sink runs: a worker's heap does not hold 100+ MB of rows the collector
  // must mark again and again. (Each run produces its topic's rows itself, from the
  // same seed, and drops them before its clock starts.)
  const { ndjson, convertMs } = await withRows(async (rows) => ({
    ndjson: writeNdjson(dir, rows),
    convertMs: converterMs(rows),
  }));
  const duckOut = join(dir, 'duckdb.parquet');
  /** Every DuckDB measurement of the pairs: their median and bytes end the output. */
  const duckRuns: Array<{ rate: number; bytes: number }> = [];
  line('converter.json_with_schema.rate', Math.round((ROWS / convertMs) * 1000), 'rows/s');
  if (WARMUP_ROWS > 0) line('e2e.warmup.rows', WARMUP_ROWS, 'rows');
  line('e2e.repeats', REPEATS, 'runs');

  const config = loadConfig({
    defs: standaloneWorkerDefs,
    env: {},
    envPrefix: 'BENCH_',
    options: [
      `bootstrap.servers=${bootstrap}`,
      `plugin.path=${fileURLToPath(new URL('../../connectors/parquet-sink', import.meta.url))}`,
      'listeners=http://127.0.0.1:0',
      `offset.storage.file.filename=${join(dir, 'connect.offsets')}`,
      'offset.flush.interval.ms=100',
      ...(process.env.BENCH_FETCH_BYTES
        ? [`consumer.max.partition.fetch.bytes=${process.env.BENCH_FETCH_BYTES}`]
        : []),
      'key.converter=org.apache.kafka.connect.storage.StringConverter',
      'value.converter=org.apache.kafka.connect.json.JsonConverter',
      'value.converter.schemas.enable=true',
    ],
    passthroughPrefixes: workerPassthroughPrefixes,
  }).values;

  /** Each repeat writes under a topics.dir of its own: the sink resumes from its store. */
  const s3Store = (repeat: number) => ({
    'store.url': s3.endpoint,
    's3.bucket.name': 'bench',
    's3.region': s3.region,
    'aws.access.key.id': s3.credentials.accessKeyId,
    'aws.secret.access.key': s3.credentials.secretAccessKey,
    's3.part.size': String(5 * 1024 * 1024),
    'topics.dir': `topics-${repeat}`,
  });
  /** The converter of the schemaless runs: plain JSON values, the schema inferred. */
  const plainJson = {
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': 'false',
  };
  const s3Bytes = (topic: string, from: number, repeat: number) =>
    folderBytes(
      join(s3.directory, 'bench', `topics-${repeat}`, topic),
      '.parquet._S3rver_object',
      from,
    );
  const lakeStore = (name: string) => (repeat: number) => ({
    'store.url': `file://${join(dir, `${name}-${repeat}`)}`,
  });
  const lakeBytes = (name: string) => (_topic: string, from: number, repeat: number) =>
    folderBytes(join(dir, `${name}-${repeat}`), '.parquet', from);

  /**
   * REPEATS sink runs of one kind, each just after DuckDB's best of three, so that
   * each ratio compares two measurements made under the same load: on this shared
   * machine both rates drift by tens of percent within minutes. Prints each pair as a
   * `#` line, then the medians.
   */
  async function measure(
    prefix: string,
    name: string,
    store: (repeat: number) => Record<string, string>,
    withSchema: boolean,
    bytes: (topic: string, from: number, repeat: number) => number,
    storePid?: number,
  ) {
    const runs: Array<SinkRun & { bytes: number; rate: number; duck: number; duckBytes: number }> =
      [];
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      const duck = await duckdb(ndjson, duckOut);
      duckRuns.push(duck);
      const run = await runSink(
        admin,
        kafka,
        config,
        REPEATS === 1 ? name : `${name}-${repeat + 1}`,
        store(repeat),
        withSchema,
        (topic, from) => bytes(topic, from, repeat),
        storePid,
      );
      const rate = Math.round((run.rows / run.ms) * 1000);
      runs.push({ ...run, rate, duck: duck.rate, duckBytes: duck.bytes });
      console.log(
        `# ${name} run ${repeat + 1}: ${rate} rows/s, DuckDB just before ${duck.rate} rows/s, ratio ${(rate / duck.rate).toFixed(3)}, main thread ${((run.mainMs * 1000) / run.rows).toFixed(3)} us/row`,
      );
    }
    const perRow = (ms: (r: SinkRun) => number) => median(runs.map((r) => (ms(r) * 1000) / r.rows));
    const rate = Math.round(median(runs.map((r) => r.rate)));
    line(`${prefix}.rate`, rate, 'rows/s');
    line(`${prefix}.bytes`, runs[0]!.bytes, 'bytes');
    line(`${prefix}.duckdb_rate`, Math.round(median(runs.map((r) => r.duck))), 'rows/s');
    line(`${prefix}.rate_vs_duckdb`, median(runs.map((r) => r.rate / r.duck)), 'ratio');
    line(`${prefix}.bytes_vs_duckdb`, runs[0]!.bytes / runs[0]!.duckBytes, 'ratio');
    line(`${prefix}.rate_vs_target_150k`, rate / 150_000, 'ratio');
    line(
      `${prefix}.cpu_per_row`,
      perRow((r) => r.cpuMs),
      'us',
    );
    line(
      `${prefix}.main_thread_cpu_per_row`,
      perRow((r) => r.mainMs),
      'us',
    );
    if (storePid !== undefined) {
      line(
        `${prefix}.s3rver_process_cpu_per_row`,
        perRow((r) => r.storeCpuMs),
        'us',
      );
    }
    return rate;
  }

  if (RUNS.has('local')) {
    const rate = await measure(
      'e2e.local',
      'e2e-local',
      lakeStore('lake'),
      true,
      lakeBytes('lake'),
    );
    line('e2e.local.converter_share', convertMs / ((ROWS / rate) * 1000), 'ratio');
  }
  if (RUNS.has('s3')) {
    await measure('e2e.s3rver', 'e2e-s3', s3Store, true, s3Bytes, s3.pid);
  }
  // The bound: the same rows as plain JSON values (no inline schema to skip, types
  // inferred by the sink). Their values are the NDJSON lines DuckDB reads, byte for byte.
  if (RUNS.has('schemaless')) {
    const store = lakeStore('lake-schemaless');
    await measure(
      'e2e.local_schemaless',
      'e2e-schemaless',
      (repeat) => ({ ...store(repeat), ...plainJson }),
      false,
      lakeBytes('lake-schemaless'),
    );
  }
  if (RUNS.has('schemaless-s3')) {
    await measure(
      'e2e.s3rver_schemaless',
      'e2e-schemaless-s3',
      (repeat) => ({ ...s3Store(repeat), ...plainJson }),
      false,
      s3Bytes,
      s3.pid,
    );
  }
  if (duckRuns.length > 0) {
    line('duckdb.snappy.rate', Math.round(median(duckRuns.map((d) => d.rate))), 'rows/s');
    line('duckdb.snappy.bytes', (duckRuns[0] as { bytes: number }).bytes, 'bytes');
  }
} finally {
  await admin.disconnect();
  await broker.stop();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
