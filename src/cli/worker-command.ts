/**
 * `connect worker`: a distributed-mode Connect worker. When bootstrap.servers is empty
 * (or broker.embedded=true) it first starts the embedded broker on its own thread
 * (worker_threads), so broker I/O and connector work use both cores.
 *
 * Then it starts the distributed worker (src/connect/herder/distributed-worker.ts:
 * plugins, Kafka clients, internal-topic stores, worker, herder, REST API, group
 * member) and prints one line with the REST URL once it is running. SIGINT/SIGTERM
 * stop in reverse order through the shutdown path: REST, herder (tasks stopped and
 * offsets committed, the group left), stores and clients, and the broker last (its
 * logs flushed).
 */
import { Command } from 'commander';
import type { ConfigError } from '../config/config-def.ts';
import { renderHelpKeys } from '../config/config-reference.ts';
import type { LoadRequest } from '../config/load.ts';
import {
  distributedWorkerDefs,
  embedsBroker,
  restListenerWarnings,
  workerPassthroughPrefixes,
} from '../config/worker-config.ts';
import {
  type DistributedWorker,
  startDistributedWorker,
} from '../connect/herder/distributed-worker.ts';
import { workerClientKeyProblems } from '../connect/runtime/client-keys.ts';
import { ConfigProviders } from '../connect/runtime/config-providers.ts';
import { Shutdown } from '../util/shutdown.ts';
import { brokerCrossChecks } from './broker-command.ts';
import { type CliContext, EXIT_FAILURE, EXIT_USAGE } from './cli-context.ts';
import { startRegisteredBroker, withBrokerThread } from './embedded-broker.ts';
import { collectOption, loadForCommand, restAuthForCommand } from './load-for-command.ts';

export const WORKER_ENV_PREFIX = 'CONNECT_';

/** What `connect worker <file> -o ...` loads (connect demo loads its worker the same way). */
export function workerLoadRequest(
  file: string | undefined,
  options: readonly string[],
): Omit<LoadRequest, 'env'> {
  return {
    defs: distributedWorkerDefs,
    file,
    envPrefix: WORKER_ENV_PREFIX,
    options,
    passthroughPrefixes: workerPassthroughPrefixes,
    crossChecks: workerCrossChecks,
    crossWarnings: restListenerWarnings,
  };
}

export function workerCrossChecks(values: Record<string, unknown>): ConfigError[] {
  const errors: ConfigError[] = [];
  const servers = values['bootstrap.servers'] as string[];
  if (values['broker.embedded'] === false && servers.length === 0) {
    errors.push({
      key: 'bootstrap.servers',
      value: '',
      message: 'must name the Kafka cluster (host:port,...) when broker.embedded=false',
    });
  }
  // Standalone mode has neither key defined (they may still arrive as raw strings).
  const heartbeat = values['heartbeat.interval.ms'];
  const session = values['session.timeout.ms'];
  if (typeof heartbeat === 'number' && typeof session === 'number' && heartbeat >= session) {
    errors.push({
      key: 'heartbeat.interval.ms',
      value: heartbeat,
      message: `must be lower than session.timeout.ms (${session})`,
    });
  }
  // The value is left out: a refused ssl.* or sasl.jaas.config key may hold a secret.
  for (const { key, message } of workerClientKeyProblems(values)) {
    errors.push({ key, value: undefined, message });
  }
  return [...errors, ...ConfigProviders.errorsIn(values), ...brokerCrossChecks(values)];
}

export const workerEnvHelp = [
  'Precedence: properties file < CONNECT_* environment variables < -o key=value.',
  'Environment names follow the Confluent images: prefix CONNECT_, dots become _, a literal _ is __',
  '(CONNECT_BOOTSTRAP_SERVERS -> bootstrap.servers, CONNECT_GROUP_ID -> group.id).',
  'Keys under key.converter., value.converter., header.converter. and config.providers. are passed',
  'to the plugins they name; producer. and consumer. keys to the clients, each checked: a Kafka client',
  'key the clients do not implement (and admin., ssl., sasl. keys: PLAINTEXT only) is refused by name.',
].join('\n');

export function workerCommand(ctx: CliContext, setExitCode: (code: number) => void): Command {
  return new Command('worker')
    .description(
      'Run a distributed-mode Connect worker; with bootstrap.servers empty it also runs the embedded broker.',
    )
    .argument('[worker.properties]', 'Java .properties file with worker keys')
    .option(
      '-o, --override <key=value>',
      'set a key (repeatable); wins over file and environment',
      collectOption,
    )
    .addHelpText(
      'after',
      `\n${workerEnvHelp}\n\nKeys:\n${renderHelpKeys(distributedWorkerDefs, WORKER_ENV_PREFIX)}`,
    )
    .action(async (file: string | undefined, opts: { override?: string[] }) => {
      setExitCode(await runWorker(ctx, file, opts.override ?? []));
    });
}

export async function runWorker(
  ctx: CliContext,
  file: string | undefined,
  overrides: string[],
): Promise<number> {
  const values = loadForCommand(ctx, workerLoadRequest(file, overrides));
  if (!values) return EXIT_USAGE;
  const restAuth = restAuthForCommand(ctx, values);
  if (restAuth === undefined) return EXIT_USAGE;
  const shutdown = new Shutdown({
    signals: ctx.signals,
    forceExit: ctx.forceExit,
    timeoutMs: ctx.shutdownTimeoutMs,
  });
  shutdown.installSignalHandlers();
  let servers = values['bootstrap.servers'] as string[];
  // The embedded broker's metrics join the worker's GET /metrics (asked on each scrape).
  const metricsSources: Array<() => Promise<string>> = [];
  if (embedsBroker(values)) {
    const broker = await startRegisteredBroker(
      withBrokerThread(ctx),
      values,
      shutdown,
      'embedded broker',
    );
    if (broker.state === 'failed') {
      await shutdown.shutdown();
      return EXIT_FAILURE;
    }
    if (broker.state === 'interrupted') return shutdown.done;
    // With broker.embedded=true and bootstrap.servers set, the worker uses the cluster named.
    if (servers.length === 0) servers = [broker.bootstrapServers];
    const running = broker.broker;
    if (running.metrics) metricsSources.push(() => running.metrics?.() ?? Promise.resolve(''));
  }
  let worker: DistributedWorker;
  let onFatal!: (error: Error) => void;
  const fatal = new Promise<Error>((resolve) => {
    onFatal = resolve;
  });
  try {
    worker = await startDistributedWorker({
      config: { ...values, 'bootstrap.servers': servers },
      onFatal,
      metricsSources,
      restAuth,
    });
  } catch (e) {
    ctx.err(`error: the worker failed to start: ${(e as Error).message}`);
    await shutdown.shutdown();
    return EXIT_FAILURE;
  }
  if (shutdown.isShuttingDown) {
    await worker.stop();
    return shutdown.done;
  }
  shutdown.register('distributed worker', () => worker.stop());
  ctx.err(
    `worker ${worker.workerId} running (group.id ${values['group.id']}, Kafka at ${servers.join(',')}), REST API on ${worker.restUrl}`,
  );
  // A worker that can no longer be a group member (e.g. the broker refuses its
  // session.timeout.ms) stops rather than serve a REST API that can change nothing.
  return Promise.race([
    shutdown.done,
    fatal.then(async (error) => {
      ctx.err(`error: the worker left group ${values['group.id']} for good: ${error.message}`);
      await shutdown.shutdown();
      return EXIT_FAILURE;
    }),
  ]);
}
