/**
 * `connect standalone`: one worker with its connectors given as files and offsets in
 * a local file. Validates the worker config and every connector file before anything
 * starts; with bootstrap.servers empty (or broker.embedded=true) it starts the
 * embedded broker first and points the worker at it. Then it runs the standalone
 * worker (src/connect/runtime/standalone-worker.ts: REST API, herder, tasks) until
 * SIGINT/SIGTERM, which stop the worker before the broker.
 */
import { Command } from 'commander';
import type { ConfigError } from '../config/config-def.ts';
import { renderHelpKeys } from '../config/config-reference.ts';
import { readConnectorFile } from '../config/connector-file.ts';
import {
  distributedOnlyKeys,
  embedsBroker,
  restListenerWarnings,
  standaloneWorkerDefs,
  workerPassthroughPrefixes,
} from '../config/worker-config.ts';
import { standaloneExactlyOnceError } from '../connect/runtime/exactly-once.ts';
import {
  type StandaloneWorker,
  startStandaloneWorker,
} from '../connect/runtime/standalone-worker.ts';
import { Shutdown } from '../util/shutdown.ts';
import { type CliContext, EXIT_FAILURE, EXIT_USAGE } from './cli-context.ts';
import { startRegisteredBroker, withBrokerThread } from './embedded-broker.ts';
import { collectOption, loadForCommand, restAuthForCommand } from './load-for-command.ts';
import { WORKER_ENV_PREFIX, workerCrossChecks, workerEnvHelp } from './worker-command.ts';

export function standaloneCommand(ctx: CliContext, setExitCode: (code: number) => void): Command {
  return new Command('standalone')
    .description('Run one standalone worker with the connectors given as files.')
    .argument('<worker.properties>', 'Java .properties file with worker keys')
    .argument(
      '<connector...>',
      'connector configs: .json (POST /connectors body or flat) or .properties',
    )
    .option('-o, --override <key=value>', 'set a worker key (repeatable)', collectOption)
    .addHelpText(
      'after',
      `\n${workerEnvHelp}\n\nKeys:\n${renderHelpKeys(standaloneWorkerDefs, WORKER_ENV_PREFIX)}`,
    )
    .action(async (file: string, connectors: string[], opts: { override?: string[] }) => {
      setExitCode(await runStandalone(ctx, file, connectors, opts.override ?? []));
    });
}

/** The worker's checks, and standalone mode's refusal of exactly-once sources (as Kafka's). */
function standaloneCrossChecks(values: Record<string, unknown>): ConfigError[] {
  const errors = workerCrossChecks(values);
  const exactlyOnce = standaloneExactlyOnceError(values);
  if (exactlyOnce !== null)
    errors.push({
      key: 'exactly.once.source.support',
      value: values['exactly.once.source.support'],
      message: exactlyOnce,
    });
  return errors;
}

export async function runStandalone(
  ctx: CliContext,
  file: string,
  connectorPaths: string[],
  overrides: string[],
): Promise<number> {
  const values = loadForCommand(ctx, {
    defs: standaloneWorkerDefs,
    file,
    envPrefix: WORKER_ENV_PREFIX,
    options: overrides,
    passthroughPrefixes: workerPassthroughPrefixes,
    ignoredKeys: distributedOnlyKeys,
    crossChecks: standaloneCrossChecks,
    crossWarnings: restListenerWarnings,
  });
  const connectors = connectorPaths.map(readConnectorFile);
  for (const c of connectors) if (!c.ok) ctx.err(`error: ${c.error}`);
  if (!values || connectors.some((c) => !c.ok)) return EXIT_USAGE;
  const restAuth = restAuthForCommand(ctx, values);
  if (restAuth === undefined) return EXIT_USAGE;
  const names = connectors.map((c) => (c.ok ? c.file.name : ''));
  const shutdown = new Shutdown({
    signals: ctx.signals,
    forceExit: ctx.forceExit,
    timeoutMs: ctx.shutdownTimeoutMs,
  });
  shutdown.installSignalHandlers();
  let workerValues = values;
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
    workerValues = { ...values, 'bootstrap.servers': [broker.bootstrapServers] };
    const running = broker.broker;
    if (running.metrics) metricsSources.push(() => running.metrics?.() ?? Promise.resolve(''));
  }
  let worker: StandaloneWorker;
  try {
    worker = await startStandaloneWorker({
      config: workerValues,
      metricsSources,
      restAuth,
      connectors: connectors.flatMap((c) =>
        c.ok ? [{ name: c.file.name, config: c.file.config }] : [],
      ),
    });
  } catch (e) {
    ctx.err(`error: the standalone worker failed to start: ${(e as Error).message}`);
    await shutdown.shutdown();
    return EXIT_FAILURE;
  }
  if (shutdown.isShuttingDown) {
    await worker.stop();
    return shutdown.done;
  }
  shutdown.register('standalone worker', () => worker.stop());
  for (const c of worker.created) {
    if (c.error !== undefined)
      ctx.err(`error: connector ${c.name} was not created: ${c.error.message}`);
  }
  ctx.err(
    `standalone worker running (connectors: ${names.join(', ')}), REST API on ${worker.restUrl}`,
  );
  return shutdown.done;
}
