/**
 * One standalone worker, composed: plugins from plugin.path, source offsets in the
 * offset file, configs and states in memory, the Worker, the StandaloneHerder, and the
 * REST API. Used by `connect standalone` and by integration tests (in process).
 *
 * Start order: plugins, offset file, worker (admin client), herder, REST server, then
 * the given connectors. `stop()` undoes it in reverse: REST closes (no new requests),
 * the herder stops every connector and task (each task given
 * task.shutdown.graceful.timeout.ms, offsets committed), the worker closes its admin
 * client, the offset file finishes its last write. The Kafka cluster (embedded
 * broker or not) is the caller's.
 */

import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { restListeners } from '../../config/worker-config.ts';
import { getLogger, type Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import type { ConnectorInfo } from '../herder/herder.ts';
import { StandaloneHerder } from '../herder/standalone-herder.ts';
import { type BasicAuthenticator, requireRestAuth } from '../rest/basic-auth.ts';
import { LoggerLevels } from '../rest/logger-levels.ts';
import { type RestServer, startRestServer } from '../rest/rest-server.ts';
import { FileOffsetBackingStore } from '../storage/file-offset-backing-store.ts';
import { MemoryConfigBackingStore } from '../storage/memory-config-backing-store.ts';
import { MemoryStatusBackingStore } from '../storage/memory-status-backing-store.ts';
import { loadPlugins, type PluginRegistry } from './plugins.ts';
import { Worker } from './worker.ts';

export interface StandaloneWorkerOptions {
  /** Parsed standalone worker config; bootstrap.servers must name the cluster. */
  config: Record<string, unknown>;
  /** Connectors to create at start (name and config, as read from files). */
  connectors?: ReadonlyArray<{ name: string; config: Record<string, string> }>;
  logger?: Logger;
  timers?: Timers;
  /** More Prometheus text for GET /metrics on each scrape (the embedded broker's). */
  metricsSources?: ReadonlyArray<() => Promise<string>>;
  /**
   * The REST authentication (rest.extension.classes) the CLI already resolved; absent:
   * resolved here from config and `env` (default process.env), throwing what is wrong.
   */
  restAuth?: BasicAuthenticator | null;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface StandaloneWorker {
  herder: StandaloneHerder;
  worker: Worker;
  plugins: PluginRegistry;
  /** Base URL of the REST API, with the port actually bound. */
  restUrl: string;
  /** What creating each given connector answered (or its error). */
  created: Array<{ name: string; result?: ConnectorInfo; error?: Error }>;
  stop(): Promise<void>;
}

/** Kafka Connect names a worker by its advertised REST host and port. */
function workerId(config: Record<string, unknown>): string {
  const listener = restListeners(config)[0] ?? 'http://:8083';
  const match = /^\w+:\/\/(\[[^\]]*\]|[^:/]*):(\d+)/.exec(listener);
  const host = (config['rest.advertised.host.name'] as string | null) || match?.[1] || hostname();
  const port = (config['rest.advertised.port'] as number | null) ?? Number(match?.[2] ?? 8083);
  return `${host}:${port}`;
}

export async function startStandaloneWorker(
  options: StandaloneWorkerOptions,
): Promise<StandaloneWorker> {
  const config = options.config;
  const logger = options.logger ?? getLogger('connect.standalone');
  // Before anything starts: a REST extension it cannot honour stops the start.
  const auth =
    options.restAuth !== undefined
      ? options.restAuth
      : requireRestAuth(config, options.env ?? process.env, getLogger('connect.rest'));
  const cleanups: Array<() => Promise<void>> = [];
  const undo = async () => {
    for (const c of cleanups.reverse())
      await c().catch((e: unknown) => logger.error({ err: e }, 'stop failed'));
  };
  try {
    const plugins = await loadPlugins({ pluginPath: config['plugin.path'] as string[], logger });
    const offsetStore = new FileOffsetBackingStore(
      resolve(config['offset.storage.file.filename'] as string),
    );
    await offsetStore.start();
    cleanups.push(() => offsetStore.stop());
    const id = workerId(config);
    const status = new MemoryStatusBackingStore(id);
    let herder: StandaloneHerder | undefined;
    const worker = new Worker({
      workerId: id,
      config,
      plugins,
      offsetStore,
      status: {
        connectorState: (c, s, t) => status.connectorState(c, s, t),
        taskState: (i, s, t) => status.taskState(i, s, t),
        connectorDeleted: (c) => status.connectorDeleted(c),
        topicUsed: (c, t) => herder?.topicUsed(c, t),
      },
      logger: getLogger('connect.worker'),
      ...(options.timers ? { timers: options.timers } : {}),
    });
    await worker.start();
    cleanups.push(() => worker.stop());
    for (const source of options.metricsSources ?? []) worker.metrics.addSource(source);
    const loggerLevels = new LoggerLevels();
    herder = new StandaloneHerder({
      worker,
      plugins,
      configs: new MemoryConfigBackingStore(),
      status,
      offsetStore,
      logger,
      setLoggerLevel: (namespace, level) => void loggerLevels.setLevel(namespace, level),
    });
    const h = herder;
    cleanups.push(() => h.stop());
    const rest: RestServer = await startRestServer({
      auth,
      herder,
      plugins,
      logger: getLogger('connect.rest'),
      loggerLevels,
      metrics: worker.metrics,
      kafka: worker,
      listeners: restListeners(config),
      cors: {
        allowedOrigins: (config['access.control.allow.origin'] as string | undefined) ?? '',
        allowedMethods: (config['access.control.allow.methods'] as string | undefined) ?? '',
      },
    });
    cleanups.push(() => rest.close());
    if (id.endsWith(':0')) {
      // Listening on port 0: the id names the port actually bound, as peers would see it.
      const bound = `${id.slice(0, -2)}:${new URL(rest.url).port}`;
      worker.workerId = bound;
      status.workerId = bound;
    }
    const created: StandaloneWorker['created'] = [];
    for (const c of options.connectors ?? []) {
      try {
        const answer = await herder.putConnectorConfig(
          c.name,
          { ...c.config, name: c.name },
          false,
        );
        created.push({ name: c.name, result: answer.result });
      } catch (e) {
        created.push({ name: c.name, error: e as Error });
      }
    }
    let stopped: Promise<void> | undefined;
    return {
      herder,
      worker,
      plugins,
      restUrl: rest.url,
      created,
      stop: () => {
        stopped ??= undo();
        return stopped;
      },
    };
  } catch (e) {
    await undo();
    throw e;
  }
}
