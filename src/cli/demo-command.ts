/**
 * `connect demo`: the product's main job on embedded defaults, in one command. It
 * starts these (1, 2 and DuckDB side by side, since the worker needs Postgres only when
 * the connectors are created) and stops them in the reverse order (Ctrl-C):
 *   1. an embedded PostgreSQL with wal_level=logical in <demo.dir>/postgres, holding
 *      the `shop` database of config/examples/shop.sql (demo/demo-postgres.ts,
 *      demo/shop-schema.ts);
 *   2. the distributed worker with the embedded broker, through runWorker, the same
 *      function `connect worker` runs, with <demo.dir>/worker.properties as its file
 *      and the worker keys of -o as its overrides;
 *   3. the connectors shop-cdc (CDC source) and shop-lake (unwrap + Parquet sink into
 *      <demo.dir>/lake), created through the REST API unless they exist
 *      (demo/demo-pipeline.ts);
 *   4. the shop writer, a modest stream of inserts, updates and deletes, from the
 *      moment the database is there (demo/shop-writer.ts);
 *   5. a report every demo.report.interval.ms: row counts per table in Postgres and in
 *      the lake, through DuckDB (demo/lake-report.ts).
 * A second run with the same demo.dir finds all of it again and resumes.
 *
 * The worker runs in-process with its own signal source: the demo's Shutdown receives
 * SIGINT/SIGTERM, stops the report and the writer, then signals the worker's own
 * shutdown path (tasks stopped, offsets committed, broker flushed) and waits for it,
 * and stops Postgres last.
 *
 * Before anything starts, mistakes are refused with exit code 2: an unknown or bad key,
 * a demo.dir that cannot be written, a port (demo.postgres.port, broker.port,
 * listeners) already in use.
 */
import { EventEmitter } from 'node:events';
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { renderHelpKeys } from '../config/config-reference.ts';
import { formatLoadError, loadConfig } from '../config/load.ts';
import { distributedWorkerDefs } from '../config/worker-config.ts';
import { Shutdown } from '../util/shutdown.ts';
import { type CliContext, EXIT_FAILURE, EXIT_USAGE } from './cli-context.ts';
import {
  type DemoSettings,
  demoDefs,
  demoPaths,
  demoWorkerProperties,
  loadDemoSettings,
  splitOptions,
  unknownWorkerOptionErrors,
} from './demo/demo-config.ts';
import {
  ensureConnector,
  SINK_NAME,
  SOURCE_NAME,
  sinkConfig,
  sourceConfig,
  waitForSourceTopics,
} from './demo/demo-pipeline.ts';
import { DEMO_DATABASE, type DemoPostgres, startDemoPostgres } from './demo/demo-postgres.ts';
import { formatReport, LakeReport, lakeStateSql, tableFolder } from './demo/lake-report.ts';
import { portsInUse, portsToCheck } from './demo/port-check.ts';
import { ensureShopDatabase, SHOP_SQL } from './demo/shop-schema.ts';
import { ShopWriter } from './demo/shop-writer.ts';
import { collectOption } from './load-for-command.ts';
import {
  runWorker,
  WORKER_ENV_PREFIX,
  workerEnvHelp,
  workerLoadRequest,
} from './worker-command.ts';

export function demoCommand(ctx: CliContext, setExitCode: (code: number) => void): Command {
  return new Command('demo')
    .description(
      'Run the whole pipeline on embedded defaults: Postgres with live writes -> CDC -> embedded broker -> Parquet lake, counted with DuckDB.',
    )
    .option(
      '-o, --override <key=value>',
      'set a demo.* key or a worker key (repeatable)',
      collectOption,
    )
    .addHelpText(
      'after',
      `\nThe worker keys are those of \`connect worker\`; the demo's defaults for them are written to <demo.dir>/worker.properties.\n${workerEnvHelp}\n\nKeys:\n${renderHelpKeys(demoDefs, WORKER_ENV_PREFIX)}\n${renderHelpKeys(distributedWorkerDefs, WORKER_ENV_PREFIX)}`,
    )
    .action(async (opts: { override?: string[] }) => {
      setExitCode(await runDemo(ctx, opts.override ?? []));
    });
}

export async function runDemo(ctx: CliContext, overrides: string[]): Promise<number> {
  const split = splitOptions(overrides);
  const demo = loadDemoSettings(ctx.env, split.demo);
  // The worker does not know the demo's keys: its copy of the environment goes without them.
  const workerEnv = Object.fromEntries(
    Object.entries(ctx.env).filter(([name]) => !name.startsWith(`${WORKER_ENV_PREFIX}DEMO_`)),
  );
  const problems = [...demo.errors, ...unknownWorkerOptionErrors(split.worker)];
  if (problems.length > 0 || !demo.settings) {
    // The worker's keys are checked too (without the demo's file), so one try shows all.
    const worker = loadConfig({ ...workerLoadRequest(undefined, split.worker), env: workerEnv });
    return refuse(ctx, [...problems, ...worker.errors.map(formatLoadError)]);
  }
  const settings = demo.settings;
  const paths = demoPaths(settings.dir);
  try {
    mkdirSync(settings.dir, { recursive: true });
    accessSync(settings.dir, constants.W_OK);
    writeFileSync(paths.workerProperties, demoWorkerProperties(settings));
  } catch (e) {
    return refuse(ctx, [`demo.dir ${settings.dir} is not writable: ${(e as Error).message}`]);
  }
  const request = workerLoadRequest(paths.workerProperties, split.worker);
  const loaded = loadConfig({ ...request, env: workerEnv });
  if (loaded.errors.length > 0) return refuse(ctx, loaded.errors.map(formatLoadError));
  const busy = await portsInUse(portsToCheck(settings, loaded.values));
  if (busy.length > 0) return refuse(ctx, busy);

  const shutdown = new Shutdown({
    signals: ctx.signals,
    forceExit: ctx.forceExit,
    // The worker's own shutdown has ctx.shutdownTimeoutMs; Postgres and the rest come on top.
    timeoutMs: ctx.shutdownTimeoutMs * 2,
  });
  shutdown.installSignalHandlers();
  /** Registers a started part; false (after stopping it) when shutdown began meanwhile. */
  const started = async (name: string, stop: () => Promise<void>): Promise<boolean> => {
    if (shutdown.isShuttingDown) {
      await stop();
      return false;
    }
    shutdown.register(name, stop);
    return true;
  };
  const fail = async (what: string, e: unknown) => {
    ctx.err(`error: ${what}: ${(e as Error).message}`);
    await shutdown.shutdown();
    return EXIT_FAILURE;
  };

  ctx.out(`demo: data in ${settings.dir}`);
  // Postgres, the worker and DuckDB start side by side: the worker needs Postgres only
  // once the CDC connector is created. Registered in this order, they stop in the
  // reverse one whatever finished starting: the worker before Postgres.
  const postgresStarting = startDemoPostgres({
    dataDir: paths.postgres,
    logFile: paths.postgresLog,
    port: settings.postgresPort,
  });
  shutdown.register('postgres', async () => {
    const server = await postgresStarting.catch(() => undefined);
    await server?.stop();
  });

  // The worker, as `connect worker` runs it, with a signal source the demo controls.
  const workerSignals = new EventEmitter();
  let announce!: (restUrl: string) => void;
  const running = new Promise<string>((resolve) => {
    announce = resolve;
  });
  const workerCtx: CliContext = {
    ...ctx,
    env: workerEnv,
    signals: workerSignals,
    err: (line) => {
      const m = /^worker \S+ running .*REST API on (\S+)$/.exec(line);
      if (m) announce(m[1]!);
      ctx.err(line);
    },
  };
  const workerExit = runWorker(workerCtx, paths.workerProperties, split.worker);
  shutdown.register('worker', async () => {
    workerSignals.emit('SIGINT', 'SIGINT');
    await workerExit;
  });

  let postgres: DemoPostgres;
  try {
    postgres = await postgresStarting;
  } catch (e) {
    return fail('PostgreSQL did not start', e);
  }
  const lakeReport = new LakeReport({
    lakeDir: paths.lake,
    connection: postgres.connectionConfig(DEMO_DATABASE),
    intervalMs: settings.reportIntervalMs,
    print: (r) => ctx.out(formatReport(r)),
  });
  shutdown.register('lake report', () => lakeReport.stop());
  lakeReport.prepare().catch(() => undefined); // start() reports a failure
  try {
    const { created } = await ensureShopDatabase(postgres.connectionConfig, DEMO_DATABASE);
    ctx.out(
      `demo: PostgreSQL on 127.0.0.1:${postgres.port}, database ${DEMO_DATABASE} ${created ? `created from ${SHOP_SQL}` : 'found from an earlier run'}`,
    );
  } catch (e) {
    return fail(`the ${DEMO_DATABASE} database could not be set up`, e);
  }
  if (shutdown.isShuttingDown) return shutdown.done;

  // Writing starts before the pipeline exists: changes made before the CDC connector
  // has its slot are in the tables when its snapshot reads them, so none is missed.
  const writer = new ShopWriter({
    connection: postgres.connectionConfig(DEMO_DATABASE),
    writesPerSecond: settings.writesPerSecond,
    burstMs: settings.writesBurstMs,
    pauseMs: settings.writesPauseMs,
    max: settings.writesMax,
    onLimit: (n) =>
      ctx.out(`demo: the writer made ${n} changes (demo.writes.max) and stopped writing`),
    onError: (e) => ctx.err(`error: the shop writer stopped: ${e.message}`),
  });
  try {
    await writer.start();
  } catch (e) {
    return fail('the demo could not start writing', e);
  }
  if (!(await started('shop writer', () => writer.stop()))) return shutdown.done;

  const first = await Promise.race([
    running.then((restUrl) => ({ restUrl })),
    workerExit.then((code) => ({ code })),
    shutdown.done.then((code) => ({ code })),
  ]);
  if ('code' in first) {
    await shutdown.shutdown();
    return first.code === 0 ? shutdown.done : first.code;
  }
  const { restUrl } = first;

  try {
    report(
      ctx,
      `connector ${SOURCE_NAME}`,
      await ensureConnector(restUrl, SOURCE_NAME, sourceConfig(postgres)),
    );
    await waitForSourceTopics(restUrl);
    report(
      ctx,
      `connector ${SINK_NAME}`,
      await ensureConnector(
        restUrl,
        SINK_NAME,
        sinkConfig(paths.lake, settings.lakeFlushIntervalMs),
      ),
    );
  } catch (e) {
    if (shutdown.isShuttingDown) return shutdown.done;
    return fail('the demo connectors could not be created', e);
  }
  try {
    await lakeReport.start();
  } catch (e) {
    return fail('the lake report could not start (DuckDB)', e);
  }
  if (shutdown.isShuttingDown) return shutdown.done;
  printWelcome(ctx, settings, postgres, restUrl);

  // The worker leaving by itself (it lost its group for good) ends the demo.
  return Promise.race([
    shutdown.done,
    workerExit.then(async (code) => {
      if (shutdown.isShuttingDown) return shutdown.done;
      await shutdown.shutdown();
      return code === 0 ? EXIT_FAILURE : code;
    }),
  ]);
}

function printWelcome(
  ctx: CliContext,
  settings: DemoSettings,
  postgres: DemoPostgres,
  restUrl: string,
): void {
  const { lake } = demoPaths(settings.dir);
  const orders = lakeStateSql(tableFolder(lake, 'orders'), 'count(*)').replace(/\s+/g, ' ');
  ctx.out(
    [
      `demo: running. Writing ${settings.writesPerSecond} changes/s to the shop${settings.writesPauseMs > 0 ? ` in bursts of ${settings.writesBurstMs / 1000} s, ${settings.writesPauseMs / 1000} s apart` : ''}; the lake is ${lake}`,
      `  Postgres  psql postgresql://${postgres.user}:${postgres.password}@127.0.0.1:${postgres.port}/${DEMO_DATABASE}`,
      `  REST API  ${restUrl}  (status: curl ${restUrl}/connectors?expand=status)`,
      `  Lake      duckdb -c "${orders.replace(/"/g, '\\"')}"`,
      `  Every ${settings.reportIntervalMs / 1000} s: rows per table in Postgres and in the lake. Ctrl-C stops; run again to resume.`,
    ].join('\n'),
  );
}

function report(ctx: CliContext, what: string, outcome: string): void {
  ctx.out(`demo: ${what} ${outcome === 'unchanged' ? 'found from an earlier run' : outcome}`);
}

function refuse(ctx: CliContext, problems: string[]): number {
  for (const p of problems) ctx.err(`error: ${p}`);
  return EXIT_USAGE;
}
