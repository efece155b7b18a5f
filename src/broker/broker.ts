/**
 * The embedded broker: composes the TCP server, the log manager, the group
 * coordinator and producer state into one single-node Kafka-protocol broker.
 *
 * Contract used by the CLI and the test harness: `startBroker` resolves once the
 * listener accepts connections, and `stop()` closes the listener, lets in-flight
 * answers finish briefly (long polls answer at once), stops the group coordinator,
 * writes producer state snapshots, then flushes and closes every log (writing
 * recovery checkpoints), and resolves when nothing is left running. A broker that
 * fails to start releases what it had opened before rejecting.
 *
 * Data directory: the log manager's layout (topics/, `<topic>-<partition>/`, among
 * them `__consumer_offsets`, the group store, replayed into the coordinator on start, and
 * `__transaction_state`, the transaction log, created on first use and replayed into
 * the transaction coordinator on start, which completes prepared transactions), plus
 * `meta.json` (cluster id, node id; the cluster id is made once and kept) and
 * `producer-ids.json` (producer-id-manager.ts).
 *
 * Everything runs on the calling thread's event loop; broker-thread.ts runs it on a
 * worker thread of its own.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { brokerConfigDefs } from '../config/broker-config.ts';
import { systemClock } from '../util/clock.ts';
import { getLogger } from '../util/logger.ts';
import { systemTimers } from '../util/timers.ts';
import type { MigrationPolicy } from './group/consumer-group/migration.ts';
import { GroupCoordinator } from './group/group-coordinator.ts';
import { OffsetsTopicStore } from './group/offsets-topic-store.ts';
import type { BrokerServices } from './handlers/broker-services.ts';
import { groupHandlers } from './handlers/group/index.ts';
import type { RequestHandler } from './handlers/handler.ts';
import { brokerHandlers } from './handlers/index.ts';
import { readJsonFile, writeFileAtomic } from './log/atomic-file.ts';
import { LogManager } from './log/log-manager.ts';
import { BrokerMetrics } from './metrics/broker-metrics.ts';
import { type MetricsListener, startMetricsListener } from './metrics/metrics-listener.ts';
import { ProducerIdManager } from './producer/producer-id-manager.ts';
import { ProducerStateStore } from './producer/producer-state-store.ts';
import { createRequestRouter } from './server/request-router.ts';
import { SocketServer } from './server/socket-server.ts';
import { MarkerWriter } from './txn/marker-writer.ts';
import { TransactionCoordinator } from './txn/transaction-coordinator.ts';
import { TransactionLogStore } from './txn/transaction-log-store.ts';
import { txnConfigFrom } from './txn/txn-config.ts';

export interface BrokerOptions {
  /** Address to listen on; 0.0.0.0 listens everywhere. */
  host: string;
  /** 0 picks a free port (tests); `RunningBroker.port` tells which. */
  port: number;
  /** Host clients are told to connect to in Metadata; defaults to host (or 127.0.0.1 for 0.0.0.0). */
  advertisedHost?: string;
  /** Port clients are told to connect to in Metadata; defaults to the bound port (a proxy in front may differ). */
  advertisedPort?: number;
  /** Directory holding partition logs and broker metadata. */
  dataDir: string;
  nodeId: number;
  /** Parsed broker-level config values keyed by Kafka's names (log.*, num.partitions, ...). */
  config: Record<string, unknown>;
  /** Include process_* gauges in metrics(); false next to a worker, which has its own. */
  processMetrics?: boolean;
}

export interface RunningBroker {
  readonly host: string;
  readonly port: number;
  /** The broker's metrics in the Prometheus text format (broker-metrics.ts); absent in test fakes. */
  metrics?(): Promise<string>;
  stop(): Promise<void>;
}

/** How often producer state is snapshotted, bounding the log tail replayed after a crash. */
const PRODUCER_SNAPSHOT_INTERVAL_MS = 60_000;
/** How long stop() lets in-flight answers finish before closing connections. */
const STOP_GRACE_MS = 2_000;
/** transaction.remove.expired.transaction.cleanup.interval.ms, Kafka's default. */
const TXN_ID_EXPIRY_CHECK_MS = 3_600_000;
/** offset.metadata.max.bytes, Kafka's default. */
const OFFSET_METADATA_MAX_BYTES = 4096;

export async function startBroker(options: BrokerOptions): Promise<RunningBroker> {
  const logger = getLogger('broker');
  const config = withDefaults(options.config);
  const metrics = new BrokerMetrics({ processMetrics: options.processMetrics !== false });
  mkdirSync(options.dataDir, { recursive: true });
  const clusterId = loadClusterId(options.dataDir, options.nodeId);
  const producerStates = new ProducerStateStore(getLogger('broker.producer'));
  const logs = LogManager.open({
    dataDir: options.dataDir,
    brokerConfig: config,
    clock: systemClock,
    retentionCheckIntervalMs: config['log.retention.check.interval.ms'] as number,
    cleanerBackoffMs: config['log.cleaner.backoff.ms'] as number,
    cleanerEnabled: config['log.cleaner.enable'] as boolean,
    // Open transactions' records are never compacted away.
    lastStableOffset: (log) => producerStates.lastStableOffset(log),
  });
  const stopping = new AbortController();
  // Every waiting Fetch listens for the broker stopping: one listener per long poll.
  setMaxListeners(0, stopping.signal);
  // Committed offsets and group metadata live in __consumer_offsets (created on first start).
  const groupStore = OffsetsTopicStore.open(logs, {
    partitions: config['offsets.topic.num.partitions'] as number,
    segmentBytes: config['offsets.topic.segment.bytes'] as number,
    clock: systemClock,
    logger: getLogger('broker.group.store'),
  });
  const coordinator = new GroupCoordinator({
    clock: systemClock,
    timers: systemTimers,
    logger: getLogger('broker.group'),
    minSessionTimeoutMs: config['group.min.session.timeout.ms'] as number,
    maxSessionTimeoutMs: config['group.max.session.timeout.ms'] as number,
    initialRebalanceDelayMs: config['group.initial.rebalance.delay.ms'] as number,
    offsetsRetentionMs: (config['offsets.retention.minutes'] as number) * 60_000,
    maxMetadataBytes: OFFSET_METADATA_MAX_BYTES,
    consumerMigrationPolicy: (
      config['group.consumer.migration.policy'] as string
    ).toLowerCase() as MigrationPolicy,
    store: groupStore,
  });
  const txnConfig = txnConfigFrom(config);
  const txnLogger = getLogger('broker.txn');
  const txnStore = new TransactionLogStore(logs, {
    partitions: txnConfig.stateLogPartitions,
    segmentBytes: txnConfig.stateLogSegmentBytes,
    clock: systemClock,
  });
  let server: SocketServer | undefined;
  let metricsListener: MetricsListener | undefined;
  let snapshotTimer: NodeJS.Timeout | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  let txnTimeoutTimer: NodeJS.Timeout | undefined;
  let txnExpiryTimer: NodeJS.Timeout | undefined;
  let transactions: TransactionCoordinator | undefined;
  try {
    groupStore.loadInto(coordinator);
    const producerIds = await ProducerIdManager.open(options.dataDir);
    transactions = new TransactionCoordinator({
      store: txnStore,
      markers: new MarkerWriter({
        logs,
        producerStates,
        groups: coordinator,
        clock: systemClock,
        logger: txnLogger,
      }),
      allocateProducerId: () => producerIds.allocate(),
      clock: systemClock,
      logger: txnLogger,
      maxTimeoutMs: txnConfig.maxTimeoutMs,
      idExpirationMs: txnConfig.idExpirationMs,
    });
    await transactions.load(txnStore.load());
    const services: BrokerServices = {
      coordinator,
      logs,
      nodeId: options.nodeId,
      advertisedHost: options.advertisedHost ?? defaultAdvertisedHost(options.host),
      port: options.port,
      clusterId,
      config,
      producerIds,
      producerStates,
      transactions,
      clock: systemClock,
      logger,
      stopping: stopping.signal,
      metrics,
    };
    const handlers = new Map<number, RequestHandler<BrokerServices>>(brokerHandlers);
    // BrokerServices includes GroupHandlerServices, so the group handlers take it as is.
    for (const [key, handler] of Object.entries(groupHandlers)) handlers.set(Number(key), handler);
    const router = createRequestRouter(handlers, services, getLogger('broker.server'));
    server = new SocketServer({
      host: options.host,
      port: options.port,
      maxRequestBytes: config['socket.request.max.bytes'] as number,
      handler: metrics.instrument(router.handle),
      logger: getLogger('broker.server'),
    });
    const listeningServer = server;
    metrics.attach({ logs, coordinator, connectionCount: () => listeningServer.connectionCount });
    await server.listen();
    services.port = options.advertisedPort ?? server.port;
    const metricsAt = config['metrics.listener'] as string | null;
    if (metricsAt) {
      metricsListener = await startMetricsListener(metricsAt, () => metrics.text());
      logger.info(`broker metrics on ${metricsListener.url}/metrics`);
    }
    logs.startBackgroundWork();
    snapshotTimer = setInterval(() => producerStates.snapshotAll(), PRODUCER_SNAPSHOT_INTERVAL_MS);
    snapshotTimer.unref();
    expiryTimer = setInterval(() => {
      coordinator.expireOffsets().catch((err) => logger.error({ err }, 'offset expiry failed'));
    }, config['offsets.retention.check.interval.ms'] as number);
    expiryTimer.unref();
    const txns = transactions;
    txnTimeoutTimer = setInterval(() => {
      txns
        .abortTimedOut()
        .catch((err) => logger.error({ err }, 'aborting timed-out transactions failed'));
    }, txnConfig.abortTimedOutIntervalMs);
    txnTimeoutTimer.unref();
    txnExpiryTimer = setInterval(() => {
      txns.expireIds().catch((err) => logger.error({ err }, 'transactional id expiry failed'));
    }, TXN_ID_EXPIRY_CHECK_MS);
    txnExpiryTimer.unref();
  } catch (e) {
    clearInterval(snapshotTimer);
    clearInterval(expiryTimer);
    clearInterval(txnTimeoutTimer);
    clearInterval(txnExpiryTimer);
    await transactions?.close();
    coordinator.close();
    await metricsListener?.close();
    await server?.close(0);
    await logs.close();
    throw e;
  }
  const listening = server;
  let stopped: Promise<void> | undefined;
  const stop = async () => {
    stopping.abort();
    clearInterval(snapshotTimer);
    clearInterval(expiryTimer);
    clearInterval(txnTimeoutTimer);
    clearInterval(txnExpiryTimer);
    await metricsListener?.close();
    await listening.close(STOP_GRACE_MS);
    // Before the logs close: a transaction being ended finishes writing its markers.
    await transactions.close();
    coordinator.close();
    producerStates.snapshotAll();
    await logs.close();
    logger.info('broker stopped');
  };
  return {
    host: options.host,
    port: listening.port,
    metrics: () => metrics.text(),
    stop: () => {
      stopped ??= stop();
      return stopped;
    },
  };
}

function withDefaults(given: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = { ...given };
  for (const def of brokerConfigDefs) {
    if (config[def.name] === undefined) config[def.name] = def.default;
  }
  return config;
}

function defaultAdvertisedHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

/** The cluster id made on first start (22 url-safe base64 characters, as Kafka's). */
function loadClusterId(dataDir: string, nodeId: number): string {
  const path = join(dataDir, 'meta.json');
  const stored = readJsonFile(path) as { clusterId?: unknown } | undefined;
  if (typeof stored?.clusterId === 'string') return stored.clusterId;
  const clusterId = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
  writeFileAtomic(path, JSON.stringify({ clusterId, nodeId }));
  return clusterId;
}
