/**
 * The Worker: runs the connectors and tasks a herder assigns to this process. It does
 * not decide what runs (the herder does) nor keep state (the stores do); it
 * instantiates plugins from the registry by class name or alias, builds each task's
 * converters (worker defaults, connector overrides), transform chain, error handling
 * and Kafka clients, and publishes every state change to the StatusListener.
 *
 * Calls come from the herder (one at a time per connector, any order across
 * connectors). `stop()` stops every task (each given task.shutdown.graceful.timeout.ms,
 * in parallel; a task that overruns is abandoned and logged) and then every connector,
 * and closes the worker's admin client: nothing is left running afterwards.
 */
import { type Admin, type Kafka, Partitioners } from 'kafkajs';
import { ClusterClient } from '../../protocol/client/cluster-client.ts';
import { GroupConsumer } from '../../protocol/client/group-consumer.ts';
import { type Clock, systemClock } from '../../util/clock.ts';
import { getLogger, type Logger } from '../../util/logger.ts';
import { systemTimers, type Timers } from '../../util/timers.ts';
import type { ConnectorConfig, TaskConfig } from '../api/connector.ts';
import { ConnectException } from '../api/errors.ts';
import type { SinkConnectorManifest, SourceConnectorManifest } from '../api/plugin-manifest.ts';
import { DeadLetterQueueReporter } from '../errors/dead-letter-queue-reporter.ts';
import { errorHandlingConfig } from '../errors/error-handling-config.ts';
import { LogReporter } from '../errors/log-reporter.ts';
import type { ErrorReporter } from '../errors/processing-context.ts';
import { RetryWithToleranceOperator } from '../errors/retry-with-tolerance-operator.ts';
import type { ConnectorTaskId, TargetState } from '../herder/herder.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import { ConnectorOffsetReader } from './connector-offset-reader.ts';
import {
  clientConfig,
  consumerSettings,
  createKafka,
  numberKey,
  producerSettings,
} from './kafka-clients.ts';
import { OffsetStorageWriter } from './offset-storage-writer.ts';
import { listValue } from './plugin-config.ts';
import type { PluginRegistry } from './plugins.ts';
import { createRecordConverters } from './record-converters.ts';
import { KafkaSourceProducer } from './source-producer.ts';
import { type StatusListener, taskIdString } from './status-listener.ts';
import { TopicCreation } from './topic-creation.ts';
import { TransformationChain } from './transformation-chain.ts';
import { WorkerConnector } from './worker-connector.ts';
import { WorkerSinkTask } from './worker-sink-task.ts';
import { WorkerSourceTask } from './worker-source-task.ts';

export interface WorkerOptions {
  workerId: string;
  /** Parsed worker config values (worker-config.ts keys plus passthrough keys). */
  config: Readonly<Record<string, unknown>>;
  plugins: PluginRegistry;
  offsetStore: OffsetBackingStore;
  status: StatusListener;
  /** A kafkajs client for the cluster; by default one is made from bootstrap.servers. */
  kafka?: Kafka;
  clock?: Clock;
  timers?: Timers;
  logger?: Logger;
}

type RunningTask = WorkerSourceTask | WorkerSinkTask;

export class Worker {
  /** `host:port` of the worker's REST API; set again once a port-0 listener is bound. */
  workerId: string;
  private readonly kafka: Kafka;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly logger: Logger;
  private admin: Admin | null = null;
  private readonly connectors = new Map<string, WorkerConnector>();
  private readonly tasks = new Map<string, RunningTask>();

  constructor(private readonly o: WorkerOptions) {
    this.workerId = o.workerId;
    this.clock = o.clock ?? systemClock;
    this.timers = o.timers ?? systemTimers;
    this.logger = o.logger ?? getLogger('connect.worker');
    this.kafka = o.kafka ?? createKafka(o.config, this.logger);
  }

  async start(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    this.admin = admin;
  }

  /** The admin client, for offsets of sink connectors and cluster id (after start). */
  adminClient(): Admin {
    if (this.admin === null) throw new Error('Worker.adminClient() before start()');
    return this.admin;
  }

  private manifest(config: ConnectorConfig): SourceConnectorManifest | SinkConnectorManifest {
    const cls = config['connector.class'];
    const manifest =
      cls === undefined ? undefined : this.o.plugins.findOfType(cls, 'source', 'sink');
    if (manifest === undefined) {
      throw new ConnectException(
        `Failed to find any class that implements Connector and which name matches ${cls}`,
      );
    }
    return manifest;
  }

  connectorType(config: ConnectorConfig): 'source' | 'sink' | 'unknown' {
    const cls = config['connector.class'];
    return (cls && this.o.plugins.findOfType(cls, 'source', 'sink')?.type) || 'unknown';
  }

  /**
   * Start a connector towards `target`; false when it could not start (state FAILED).
   * `onReconfigure` runs when the connector asks for new task configs.
   */
  async startConnector(
    name: string,
    config: ConnectorConfig,
    target: TargetState,
    onReconfigure: () => void,
  ): Promise<boolean> {
    if (this.connectors.has(name))
      throw new ConnectException(`Connector ${name} already running on this worker`);
    let manifest: SourceConnectorManifest | SinkConnectorManifest;
    try {
      manifest = this.manifest(config);
    } catch (e) {
      this.o.status.connectorState(name, 'FAILED', String((e as Error).message));
      return false;
    }
    const wc = new WorkerConnector({
      name,
      type: manifest.type,
      connector: manifest.createConnector(),
      config,
      offsetReader: new ConnectorOffsetReader(name, this.o.offsetStore),
      status: this.o.status,
      logger: this.logger,
      onReconfigure,
    });
    this.connectors.set(name, wc);
    return wc.transitionTo(target);
  }

  isConnectorRunning(name: string): boolean {
    return this.connectors.get(name)?.isRunning ?? false;
  }

  hasConnector(name: string): boolean {
    return this.connectors.has(name);
  }

  /** The connector's task configs for its `tasks.max`. */
  connectorTaskConfigs(name: string, config: ConnectorConfig): Promise<TaskConfig[]> {
    const wc = this.connectors.get(name);
    if (wc === undefined)
      throw new ConnectException(`Connector ${name} is not running on this worker`);
    const maxTasks = Number(config['tasks.max'] ?? '1') || 1;
    const enforce = (config['tasks.max.enforce'] ?? 'true').trim().toLowerCase() !== 'false';
    return wc.taskConfigs(maxTasks, enforce);
  }

  async setConnectorTargetState(name: string, target: TargetState): Promise<void> {
    await this.connectors.get(name)?.transitionTo(target);
    for (const task of this.tasks.values())
      if (task.id.connector === name) task.setTargetState(target);
  }

  async stopConnector(name: string): Promise<void> {
    const wc = this.connectors.get(name);
    if (wc === undefined) return;
    this.connectors.delete(name);
    await wc.stop();
  }

  taskIds(connector?: string): ConnectorTaskId[] {
    return [...this.tasks.values()]
      .map((t) => t.id)
      .filter((id) => connector === undefined || id.connector === connector);
  }

  /** Start one task; false when it failed to start (state FAILED). */
  async startTask(
    id: ConnectorTaskId,
    connectorConfig: ConnectorConfig,
    taskConfig: TaskConfig,
    target: TargetState,
  ): Promise<boolean> {
    const key = taskIdString(id);
    if (this.tasks.has(key))
      throw new ConnectException(`Task ${key} already running on this worker`);
    let task: RunningTask;
    try {
      task = await this.buildTask(id, connectorConfig, taskConfig, target);
    } catch (e) {
      this.logger.error({ err: e }, `Failed to create task ${key}`);
      this.o.status.taskState(id, 'FAILED', (e as Error).stack ?? String(e));
      return false;
    }
    this.tasks.set(key, task);
    await task.start();
    return !task.isFailed;
  }

  /** Stop tasks and wait for them (each up to task.shutdown.graceful.timeout.ms). */
  async stopTasks(ids: readonly ConnectorTaskId[]): Promise<void> {
    const timeoutMs =
      (this.o.config['task.shutdown.graceful.timeout.ms'] as number | undefined) ?? 5000;
    await Promise.all(
      ids.map(async (id) => {
        const key = taskIdString(id);
        const task = this.tasks.get(key);
        if (task === undefined) return;
        this.tasks.delete(key);
        const stopped = await new Promise<boolean>((resolve) => {
          const cancel = this.timers.schedule(timeoutMs, () => resolve(false));
          task.stop().then(
            () => {
              cancel();
              resolve(true);
            },
            (e: unknown) => {
              cancel();
              this.logger.error({ err: e }, `Task ${key} failed to stop`);
              resolve(true);
            },
          );
        });
        if (!stopped)
          this.logger.error(
            `Graceful stop of task ${key} failed: it did not stop within ${timeoutMs} ms`,
          );
      }),
    );
  }

  /** Stop everything this worker runs, then its admin client. */
  async stop(): Promise<void> {
    await this.stopTasks(this.taskIds());
    await Promise.all([...this.connectors.keys()].map((name) => this.stopConnector(name)));
    await this.admin?.disconnect();
    this.admin = null;
  }

  private operator(id: ConnectorTaskId, config: ConnectorConfig, extra: ErrorReporter[]) {
    const errors = errorHandlingConfig(config);
    const reporters: ErrorReporter[] = [];
    if (errors.logEnable)
      reporters.push(new LogReporter(taskIdString(id), this.logger, errors.logIncludeMessages));
    reporters.push(...extra);
    return new RetryWithToleranceOperator(errors, reporters, {
      now: () => this.clock.now(),
      sleep: (ms) => new Promise((resolve) => this.timers.schedule(ms, () => resolve(true))),
    });
  }

  private async buildTask(
    id: ConnectorTaskId,
    connectorConfig: ConnectorConfig,
    taskConfig: TaskConfig,
    target: TargetState,
  ): Promise<RunningTask> {
    const manifest = this.manifest(connectorConfig);
    const worker = this.o.config;
    const converters = createRecordConverters(this.o.plugins, worker, connectorConfig);
    const transforms = TransformationChain.fromConfig(this.o.plugins, connectorConfig);
    const common = {
      id,
      taskClass: manifest.className,
      taskConfig,
      targetState: target,
      converters,
      transforms,
      status: this.o.status,
      clock: this.clock,
      timers: this.timers,
      logger: this.logger,
      offsetFlushIntervalMs: (worker['offset.flush.interval.ms'] as number | undefined) ?? 60_000,
      gracefulShutdownMs:
        (worker['task.shutdown.graceful.timeout.ms'] as number | undefined) ?? 5000,
    };
    if (manifest.type === 'source') {
      const settings = producerSettings(clientConfig('producer', worker, connectorConfig), worker);
      const topicCreation = TopicCreation.fromConfig(
        worker['topic.creation.enable'] !== false,
        withTopicCreationDefaults(manifest, connectorConfig),
      );
      return new WorkerSourceTask({
        ...common,
        task: manifest.createTask(),
        operator: this.operator(id, connectorConfig, []),
        producer: new KafkaSourceProducer(
          (worker['bootstrap.servers'] as string[] | undefined) ?? [],
          `connector-producer-${id.connector}-${id.task}`,
          settings,
          this.logger,
        ),
        offsetReader: new ConnectorOffsetReader(id.connector, this.o.offsetStore),
        offsetWriter: new OffsetStorageWriter(id.connector, this.o.offsetStore),
        topicCreation,
        admin: this.admin,
        offsetFlushTimeoutMs: (worker['offset.flush.timeout.ms'] as number | undefined) ?? 5000,
        bufferMemory: settings.bufferMemory,
        maxRequestBytes: settings.maxRequestBytes,
      });
    }
    const consumerKeys = clientConfig('consumer', worker, connectorConfig);
    const settings = consumerSettings(consumerKeys, worker);
    const topics = listValue(connectorConfig.topics);
    const regexText = (connectorConfig['topics.regex'] ?? '').trim();
    if (topics.length > 0 === (regexText !== '')) {
      throw new ConnectException('Must configure one of topics or topics.regex');
    }
    const errors = errorHandlingConfig(connectorConfig);
    const extra: ErrorReporter[] = [];
    let onClosed: (() => Promise<void>) | undefined;
    if (errors.dlqTopic !== '' && errors.toleranceAll) {
      const dlq = await this.deadLetterQueue(errors.dlqTopic, errors.dlqReplicationFactor);
      onClosed = () => dlq.disconnect();
      extra.push(
        new DeadLetterQueueReporter(
          errors.dlqTopic,
          id.connector,
          id.task,
          errors.dlqContextHeaders,
          (topic, m) =>
            dlq
              .send({
                topic,
                acks: -1,
                messages: [{ key: m.key, value: m.value, headers: m.headers }],
              })
              .then(() => {}),
        ),
      );
    }
    const consumer = new GroupConsumer({
      client: new ClusterClient(worker['bootstrap.servers'] as string[], {
        clientId: `connector-consumer-${id.connector}-${id.task}`,
        requestTimeoutMs: settings.requestTimeoutMs,
      }),
      groupId: `connect-${id.connector}`,
      subscription: {
        topics,
        regex: regexText === '' ? null : new RegExp(`^(?:${regexText})$`),
      },
      logger: this.logger.child({ connector: id.connector, task: id.task }),
      ...settings,
    });
    return new WorkerSinkTask({
      ...common,
      task: manifest.createTask(),
      operator: this.operator(id, connectorConfig, extra),
      consumer,
      maxPollRecords: numberKey(consumerKeys, 'max.poll.records', 500),
      ...(onClosed ? { onClosed } : {}),
    });
  }

  /** The DLQ producer, after creating the DLQ topic if it is missing. */
  private async deadLetterQueue(topic: string, replicationFactor: number) {
    const admin = this.adminClient();
    const existing = await admin.listTopics();
    if (!existing.includes(topic)) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: 1, replicationFactor }],
      });
    }
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    return producer;
  }
}

/**
 * The connector's config with its manifest's topic-creation defaults under it: a CDC
 * source asks for compacted topics without the user writing topic.creation.* keys,
 * and any such key the user does write wins.
 */
export function withTopicCreationDefaults(
  manifest: SourceConnectorManifest,
  config: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  return manifest.topicCreationDefaults ? { ...manifest.topicCreationDefaults, ...config } : config;
}
