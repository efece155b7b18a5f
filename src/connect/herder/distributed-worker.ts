/**
 * One distributed worker, composed: plugins from plugin.path, the Kafka clients, the
 * three internal-topic stores (created compacted if missing, refused if they exist
 * with another cleanup policy), the Worker, the DistributedHerder, the REST API and
 * the `connect` group member. Used by `connect worker` and by tests.
 *
 * Start order: plugins, clients, offset/config/status stores (each read to its end),
 * worker (admin client), herder, REST server (so a port-0 listener has its real port
 * before the worker names itself to the group), then the group member.
 * `stop()` undoes it in reverse: REST closes, the herder stops its tasks (offsets
 * committed), reports them UNASSIGNED and leaves the group, then the worker, the
 * stores, the producer and the protocol client close. The Kafka cluster (embedded
 * broker or not) is the caller's.
 */

import { hostname } from 'node:os';
import { Partitioners } from 'kafkajs';
import { restListeners } from '../../config/worker-config.ts';
import { ClusterClient } from '../../protocol/client/cluster-client.ts';
import { systemClock } from '../../util/clock.ts';
import { getLogger, type Logger } from '../../util/logger.ts';
import { systemTimers, type Timers } from '../../util/timers.ts';
import { type BasicAuthenticator, requireRestAuth } from '../rest/basic-auth.ts';
import { LoggerLevels } from '../rest/logger-levels.ts';
import { startRestServer } from '../rest/rest-server.ts';
import { createKafka } from '../runtime/kafka-clients.ts';
import { loadPlugins, type PluginRegistry } from '../runtime/plugins.ts';
import { Worker } from '../runtime/worker.ts';
import { ConnectorOffsetTopics } from '../storage/connector-offset-topics.ts';
import { KafkaConfigBackingStore } from '../storage/kafka-config-backing-store.ts';
import { KafkaOffsetBackingStore } from '../storage/kafka-offset-backing-store.ts';
import { KafkaStatusBackingStore } from '../storage/kafka-status-backing-store.ts';
import type { ConnectProtocolMode } from './connect-protocol.ts';
import { DistributedHerder } from './distributed-herder.ts';
import { WorkerGroupMember } from './worker-group-member.ts';

export interface DistributedWorkerOptions {
  /** Parsed distributed worker config; bootstrap.servers must name the cluster. */
  config: Record<string, unknown>;
  logger?: Logger;
  timers?: Timers;
  /** The worker left its group for good (a fatal group error): its owner should stop it. */
  onFatal?: (error: Error) => void;
  /** More Prometheus text for GET /metrics on each scrape (the embedded broker's). */
  metricsSources?: ReadonlyArray<() => Promise<string>>;
  /**
   * The REST authentication (rest.extension.classes) the CLI already resolved; absent:
   * resolved here from config and `env` (default process.env), throwing what is wrong.
   */
  restAuth?: BasicAuthenticator | null;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface DistributedWorker {
  herder: DistributedHerder;
  worker: Worker;
  member: WorkerGroupMember;
  plugins: PluginRegistry;
  /** Base URL of the REST API as bound. */
  restUrl: string;
  /** The URL this worker gives the group (rest.advertised.*), and its worker id. */
  advertisedUrl: string;
  workerId: string;
  stop(): Promise<void>;
}

/**
 * Long-poll wait of the internal topics' tailing fetch. readToEnd() can queue behind
 * one poll, and every REST read and leader write reads the config topic to its end:
 * a short wait keeps those fast at the cost of a few idle fetches a second.
 */
const INTERNAL_TOPIC_READ_WAIT_MS = 100;

/** `host:port` as Kafka Connect advertises a worker: rest.advertised.*, else the listener. */
export function advertisedAddress(config: Record<string, unknown>, boundUrl: string): string {
  const listener = restListeners(config)[0] ?? '';
  const match = /^\w+:\/\/(\[[^\]]*\]|[^:/]*):(\d+)/.exec(listener);
  const bound = new URL(boundUrl);
  const listenerHost = match?.[1] ?? '';
  const host =
    (config['rest.advertised.host.name'] as string | null) ||
    (listenerHost === '' || listenerHost === '0.0.0.0' || listenerHost === '[::]'
      ? hostname()
      : listenerHost);
  const port = (config['rest.advertised.port'] as number | null) ?? Number(bound.port);
  return `${host}:${port}`;
}

export async function startDistributedWorker(
  options: DistributedWorkerOptions,
): Promise<DistributedWorker> {
  const config = options.config;
  const logger = options.logger ?? getLogger('connect.distributed');
  // Before anything starts: a REST extension it cannot honour stops the start.
  const auth =
    options.restAuth !== undefined
      ? options.restAuth
      : requireRestAuth(config, options.env ?? process.env, getLogger('connect.rest'));
  const timers = options.timers ?? systemTimers;
  const cleanups: Array<() => Promise<void> | void> = [];
  const undo = async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (e) {
        logger.error({ err: e }, 'stop failed');
      }
    }
  };
  try {
    const plugins = await loadPlugins({ pluginPath: config['plugin.path'] as string[], logger });
    const servers = config['bootstrap.servers'] as string[];
    const clientId = (config['client.id'] as string | undefined) || 'connect-worker';
    const kafka = createKafka(config, getLogger('connect.kafka'));
    // Internal topics are written with acks=all and idempotence, one request in
    // flight, so their records are never reordered or duplicated by retries.
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const client = new ClusterClient(servers, {
      clientId,
      requestTimeoutMs: (config['request.timeout.ms'] as number | undefined) ?? 40_000,
    });
    cleanups.push(() => client.close());

    const storeLogger = getLogger('connect.storage');
    const offsetStore = new KafkaOffsetBackingStore({
      client,
      producer,
      topic: config['offset.storage.topic'] as string,
      partitions: config['offset.storage.partitions'] as number,
      replicationFactor: config['offset.storage.replication.factor'] as number,
      logger: storeLogger,
    });
    await offsetStore.start();
    cleanups.push(() => offsetStore.stop());
    const configs = new KafkaConfigBackingStore({
      client,
      producer,
      topic: config['config.storage.topic'] as string,
      replicationFactor: config['config.storage.replication.factor'] as number,
      logger: storeLogger,
      readMaxWaitMs: INTERNAL_TOPIC_READ_WAIT_MS,
    });
    await configs.start();
    cleanups.push(() => configs.stop());
    const status = new KafkaStatusBackingStore({
      client,
      producer,
      topic: config['status.storage.topic'] as string,
      partitions: config['status.storage.partitions'] as number,
      replicationFactor: config['status.storage.replication.factor'] as number,
      logger: storeLogger,
      readMaxWaitMs: INTERNAL_TOPIC_READ_WAIT_MS,
    });
    await status.start();
    cleanups.push(() => status.stop());

    // Source connectors' own offsets topics, made like the worker's offsets topic.
    const connectorOffsetTopics = new ConnectorOffsetTopics({
      client,
      producer,
      partitions: config['offset.storage.partitions'] as number,
      replicationFactor: config['offset.storage.replication.factor'] as number,
      logger: storeLogger,
    });
    cleanups.push(() => connectorOffsetTopics.stop());

    let herder: DistributedHerder | undefined;
    const worker = new Worker({
      workerId: 'unbound',
      config,
      plugins,
      offsetStore,
      connectorOffsetTopics,
      // The herder's reporter, created below; the worker reports nothing before it exists.
      status: {
        connectorState: (c, s, t) => herder?.statusListener.connectorState(c, s, t),
        taskState: (i, s, t) => herder?.statusListener.taskState(i, s, t),
        topicUsed: (c, t) => herder?.statusListener.topicUsed(c, t),
      },
      kafka,
      timers,
      logger: getLogger('connect.worker'),
    });
    await worker.start();
    cleanups.push(() => worker.stop());
    for (const source of options.metricsSources ?? []) worker.metrics.addSource(source);

    const loggerLevels = new LoggerLevels();
    const topicTracking = config['topic.tracking.enable'] !== false;
    herder = new DistributedHerder({
      worker,
      plugins,
      configs,
      status,
      offsetStore,
      topicTracking,
      timers,
      logger,
      setLoggerLevel: (namespace, level) => void loggerLevels.setLevel(namespace, level),
      ...(options.onFatal ? { onFatal: options.onFatal } : {}),
    });
    const h = herder;
    cleanups.push(() => h.stop());
    const rest = await startRestServer({
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
      topicTracking: {
        enabled: topicTracking,
        allowReset: config['topic.tracking.allow.reset'] !== false,
      },
    });
    cleanups.push(() => rest.close());

    const workerId = advertisedAddress(config, rest.url);
    const scheme = (config['rest.advertised.listener'] as string | null) || 'http';
    const advertisedUrl = `${scheme}://${workerId}/`;
    worker.workerId = workerId;
    const member = new WorkerGroupMember({
      client,
      groupId: config['group.id'] as string,
      url: advertisedUrl,
      mode: config['connect.protocol'] as ConnectProtocolMode,
      sessionTimeoutMs: config['session.timeout.ms'] as number,
      rebalanceTimeoutMs: config['rebalance.timeout.ms'] as number,
      heartbeatIntervalMs: config['heartbeat.interval.ms'] as number,
      maxDelayMs: config['scheduled.rebalance.max.delay.ms'] as number,
      groupInstanceId: (config['group.instance.id'] as string | null) ?? null,
      configOffset: () => configs.snapshot().offset,
      listener: herder.rebalance,
      clock: systemClock,
      timers,
      logger: getLogger('connect.group'),
      retryBackoffMs: (config['retry.backoff.ms'] as number | undefined) ?? 100,
    });
    herder.start(member);
    let stopped: Promise<void> | undefined;
    return {
      herder,
      worker,
      member,
      plugins,
      restUrl: rest.url,
      advertisedUrl,
      workerId,
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
