/**
 * The keys of `connect demo` and how they meet the worker's.
 *
 * `-o` options are split by name: `demo.*` keys are the demo's own (defined below),
 * everything else is a worker key and goes to the worker exactly as `connect worker -o`
 * would take it. The demo's choices for the worker (broker data under demo.dir, its own
 * group.id, quiet logs) are written to `<demo.dir>/worker.properties` and passed as the
 * worker's properties file, so the usual precedence holds: that file < CONNECT_*
 * environment variables < `-o`.
 *
 * Unlike `connect worker`, which warns about an unknown key and goes on, the demo
 * refuses one before it starts anything: a mistyped `demo.writes.per.second` would
 * otherwise be ignored while the demo runs for minutes doing something else.
 */
import { join, resolve } from 'node:path';
import { type AnyConfigDef, atLeast, between, define, nonEmpty } from '../../config/config-def.ts';
import { formatLoadError, loadConfig } from '../../config/load.ts';
import { distributedWorkerDefs, workerPassthroughPrefixes } from '../../config/worker-config.ts';
import { WORKER_ENV_PREFIX } from '../worker-command.ts';

export const DEMO_PREFIX = 'demo.';

export const demoDefs: readonly AnyConfigDef[] = [
  define<string>({
    name: 'demo.dir',
    type: 'string',
    default: './data/demo',
    validator: nonEmpty,
    group: 'Demo',
    doc: 'Folder of everything the demo keeps: postgres/, broker/, lake/ and worker.properties; a second run resumes from it.',
  }),
  define<number>({
    name: 'demo.postgres.port',
    type: 'int',
    default: 55432,
    validator: between(1, 65535),
    group: 'Demo',
    doc: 'TCP port of the embedded Postgres on 127.0.0.1 (user postgres, password postgres, database shop).',
  }),
  define<number>({
    name: 'demo.writes.per.second',
    type: 'double',
    default: 2,
    validator: (v) => (v > 0 && v <= 1000 ? undefined : 'must be above 0 and at most 1000'),
    group: 'Demo',
    doc: 'Changes per second the shop writer makes during a burst (inserts, updates and deletes of customers and orders).',
  }),
  define<number>({
    name: 'demo.writes.burst.ms',
    type: 'int',
    default: 10_000,
    validator: atLeast(1),
    group: 'Demo',
    doc: 'The writer writes in bursts this long, each followed by demo.writes.pause.ms of quiet.',
  }),
  define<number>({
    name: 'demo.writes.pause.ms',
    type: 'int',
    default: 10_000,
    validator: atLeast(0),
    group: 'Demo',
    doc: 'Quiet after each burst, long enough for the lake to catch up and show equal counts (0: write without pauses).',
  }),
  define<number>({
    name: 'demo.writes.max',
    type: 'long',
    default: 0,
    validator: atLeast(0),
    group: 'Demo',
    doc: 'Changes the writer makes in this run before it stops writing (0: no limit); the demo keeps running.',
  }),
  define<number>({
    name: 'demo.lake.flush.interval.ms',
    type: 'int',
    default: 5000,
    validator: atLeast(100),
    group: 'Demo',
    doc: "How often the Parquet sink closes its open files (its rotate.schedule.interval.ms): the lake's delay behind Postgres.",
  }),
  define<number>({
    name: 'demo.report.interval.ms',
    type: 'int',
    default: 5000,
    validator: atLeast(100),
    group: 'Demo',
    doc: 'How often the demo prints the row counts of Postgres and of the lake.',
  }),
];

export interface DemoSettings {
  /** Absolute. */
  dir: string;
  postgresPort: number;
  writesPerSecond: number;
  writesBurstMs: number;
  writesPauseMs: number;
  /** 0: no limit. */
  writesMax: number;
  lakeFlushIntervalMs: number;
  reportIntervalMs: number;
}

export function demoPaths(dir: string) {
  return {
    postgres: join(dir, 'postgres'),
    postgresLog: join(dir, 'postgres.log'),
    broker: join(dir, 'broker'),
    lake: join(dir, 'lake'),
    workerProperties: join(dir, 'worker.properties'),
  };
}

/** `-o` options split by owner; the order within each list is kept. */
export function splitOptions(options: readonly string[]): { demo: string[]; worker: string[] } {
  const demo: string[] = [];
  const worker: string[] = [];
  for (const option of options)
    (option.trim().startsWith(DEMO_PREFIX) ? demo : worker).push(option);
  return { demo, worker };
}

/**
 * The demo's own keys from `-o` and CONNECT_DEMO_* variables. Environment variables of
 * worker keys are the worker's business and are not looked at here.
 */
export function loadDemoSettings(
  env: Readonly<Record<string, string | undefined>>,
  options: readonly string[],
): { settings?: DemoSettings; errors: string[] } {
  const demoEnv = Object.fromEntries(
    Object.entries(env).filter(([name]) => name.startsWith(`${WORKER_ENV_PREFIX}DEMO_`)),
  );
  const loaded = loadConfig({
    defs: demoDefs,
    env: demoEnv,
    envPrefix: WORKER_ENV_PREFIX,
    options,
  });
  const known = new Set(demoDefs.map((d) => d.name));
  const errors = loaded.errors.map(formatLoadError);
  for (const key of unknownOptionKeys(options, known, [])) {
    errors.push(unknownKeyMessage(key, known));
  }
  if (errors.length > 0) return { errors };
  const v = loaded.values;
  return {
    errors,
    settings: {
      dir: resolve(v['demo.dir'] as string),
      postgresPort: v['demo.postgres.port'] as number,
      writesPerSecond: v['demo.writes.per.second'] as number,
      writesBurstMs: v['demo.writes.burst.ms'] as number,
      writesPauseMs: v['demo.writes.pause.ms'] as number,
      writesMax: v['demo.writes.max'] as number,
      lakeFlushIntervalMs: v['demo.lake.flush.interval.ms'] as number,
      reportIntervalMs: v['demo.report.interval.ms'] as number,
    },
  };
}

/**
 * Worker keys given with `-o` that no definition or pass-through prefix covers: errors
 * for the demo (see the header).
 */
export function unknownWorkerOptionErrors(options: readonly string[]): string[] {
  const known = new Set(distributedWorkerDefs.map((d) => d.name));
  return unknownOptionKeys(options, known, workerPassthroughPrefixes).map((key) =>
    unknownKeyMessage(key, known),
  );
}

function unknownOptionKeys(
  options: readonly string[],
  known: ReadonlySet<string>,
  prefixes: readonly string[],
): string[] {
  const keys = options
    .map((o) => (o.indexOf('=') > 0 ? o.slice(0, o.indexOf('=')).trim() : ''))
    .filter((k) => k !== '');
  return [...new Set(keys)].filter((k) => !known.has(k) && !prefixes.some((p) => k.startsWith(p)));
}

function unknownKeyMessage(key: string, known: ReadonlySet<string>): string {
  const near = nearest(key, [...known, ...demoDefs.map((d) => d.name)]);
  const hint = near ? `: did you mean '${near}'?` : ' (`connect demo --help` lists the keys)';
  return `unknown key '${key}' (from -o)${hint}`;
}

/** The known key within two edits of `key`, if any (a typo, not a different key). */
function nearest(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(key, name);
    if (distance <= 2 && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The demo's worker.properties: the quick-start worker's settings with everything kept
 * under demo.dir, a group.id of its own (a quick-start worker's internal topics are
 * not mixed up with the demo's), and warn-level logs so the demo's own lines are what
 * a user reads (`-o log.level=info` brings the worker's back).
 */
export function demoWorkerProperties(settings: DemoSettings): string {
  const { broker } = demoPaths(settings.dir);
  return [
    '# Written by `connect demo` at every start; edit with -o key=value instead.',
    'bootstrap.servers=',
    'broker.host=127.0.0.1',
    'broker.port=9092',
    `broker.data.dir=${escapeProperty(broker)}`,
    // A new group rebalances at once instead of waiting 3 s for more members.
    'group.initial.rebalance.delay.ms=0',
    'group.id=connect-demo',
    'config.storage.topic=connect-demo-configs',
    'config.storage.replication.factor=-1',
    'offset.storage.topic=connect-demo-offsets',
    'offset.storage.replication.factor=-1',
    'offset.storage.partitions=5',
    'status.storage.topic=connect-demo-status',
    'status.storage.replication.factor=-1',
    'status.storage.partitions=1',
    'key.converter=org.apache.kafka.connect.json.JsonConverter',
    'value.converter=org.apache.kafka.connect.json.JsonConverter',
    'key.converter.schemas.enable=true',
    'value.converter.schemas.enable=true',
    // Source offsets (the CDC position a second run resumes from) every 5 s.
    'offset.flush.interval.ms=5000',
    'listeners=http://127.0.0.1:8083',
    'log.level=warn',
    '',
  ].join('\n');
}

/** A backslash starts an escape in a .properties value (a Windows path has them). */
function escapeProperty(value: string): string {
  return value.replace(/\\/g, '\\\\');
}
