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
 * and closes the worker's admin client: nothing is left running afterwards but plugin
 * calls that never returned (abandoned and logged, their instances' clients closed).
 *
 * Deadlines (plugin-deadlines.ts), so one plugin never stops the worker:
 *   - startTask registers the task at once (so a stop or a restart may follow at any
 *     moment) and resolves when it is RUNNING/PAUSED, FAILED, stopped, or past
 *     task.start.timeout.ms. A herder need not await it; past the deadline the task is
 *     FAILED ("did not start within N ms") and taken out of this worker, and its
 *     instance abandoned: its reports are dropped (StatusGate), the clients the runner
 *     opened are closed now, and the task's stop() is called if its start ever
 *     returns. A restart makes a fresh instance.
 *   - startConnector resolves within connector.start.timeout.ms (worker-connector.ts).
 *   - stops wait at most task.shutdown.graceful.timeout.ms, then abandon with a log line.
 *   - deleteConnector calls the connector's `deleted(config)` hook (step 5 of
 *     connector.ts) after its tasks and the connector stopped; errors are logged.
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
import { ConnectMetrics, type TaskMetrics } from '../metrics/connect-metrics.ts';
import { adminEndOffsets } from '../metrics/consumer-lag.ts';
import type { ConnectorOffsetTopics } from '../storage/connector-offset-topics.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import type { ClientOverridePolicy } from './client-keys.ts';
import { ConfigProviders } from './config-providers.ts';
import { unlistedConnectorKeys } from './config-validation.ts';
import { ConnectorOffsetReader } from './connector-offset-reader.ts';
import { ConnectorOffsetStores, type OffsetStoreLease } from './connector-offset-stores.ts';
import {
  type ExactlyOnceMode,
  exactlyOnceMode,
  fenceProducers,
  taskDeliveryNotice,
  taskTransactionalId,
  transactionBoundaryOf,
  transactionIntervalMs,
} from './exactly-once.ts';
import {
  clientConfig,
  consumerSettings,
  createKafka,
  numberKey,
  overridePolicy,
  producerSettings,
} from './kafka-clients.ts';
import { OffsetStorageWriter } from './offset-storage-writer.ts';
import { listValue } from './plugin-config.ts';
import { StatusGate, settlesWithin } from './plugin-deadlines.ts';
import type { PluginRegistry } from './plugins.ts';
import { createRecordConverters } from './record-converters.ts';
import { KafkaSourceProducer, KafkaTransactionalSourceProducer } from './source-producer.ts';
import { TransactionBoundaries } from './source-transactions.ts';
import { errorTrace, type StatusListener, taskIdString } from './status-listener.ts';
import { TopicCreation } from './topic-creation.ts';
import { TransformationChain } from './transformation-chain.ts';
import { unusedKeyMessage } from './unknown-connector-keys.ts';
import { WorkerConnector } from './worker-connector.ts';
import { WorkerSinkTask } from './worker-sink-task.ts';
import { WorkerSourceTask, type WorkerSourceTaskOptions } from './worker-source-task.ts';

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
  /** Resolves `${provider:path:key}` in connector configs; by default from config.providers. */
  configProviders?: ConfigProviders;
  /** Where the worker's and its tasks' metrics go; by default a registry of its own. */
  metrics?: ConnectMetrics;
  /** Source connectors' own offsets topics (distributed mode); absent: refused. */
  connectorOffsetTopics?: ConnectorOffsetTopics;
}

type RunningTask = WorkerSourceTask | WorkerSinkTask;

/**
 * What the herder does around an exactly-once source task's producer registration
 * (Kafka's pre- and post-producer checks): zombie fencing of the connector's earlier
 * task generations before, and after, a check that the task is still current here.
 */
export interface ExactlyOncePreflight {
  beforeProducerInit(): Promise<void>;
  afterProducerInit(): Promise<void>;
}

/** The deadlines' defaults when the config lacks the keys (worker-config.ts says why). */
const DEFAULT_START_TIMEOUT_MS = 60_000;
const DEFAULT_STOP_TIMEOUT_MS = 5000;

/**
 * A task of this worker from startTask until it is stopped or abandoned: its runner
 * once built, the target state it should have, and the gate its reports go through.
 */
class TaskSlot {
  runner: RunningTask | null = null;
  private ended = false;
  private endNow!: () => void;
  /** Resolves once stopTasks took the task out or its start was abandoned. */
  readonly whenEnded = new Promise<void>((resolve) => {
    this.endNow = resolve;
  });

  constructor(
    readonly id: ConnectorTaskId,
    public target: TargetState,
    readonly gate: StatusGate,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  end(): void {
    this.ended = true;
    this.endNow();
  }
}

export class Worker {
  /** `host:port` of the worker's REST API; set again once a port-0 listener is bound. */
  workerId: string;
  private readonly kafka: Kafka;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly logger: Logger;
  private admin: Admin | null = null;
  private cluster: ClusterClient | null = null;
  private readonly connectors = new Map<string, WorkerConnector>();
  private readonly tasks = new Map<string, TaskSlot>();
  private readonly providers: ConfigProviders;
  /** exactly.once.source.support (exactly-once.ts). */
  readonly exactlyOnce: ExactlyOnceMode;
  /** connector.client.config.override.policy, for validating connectors' client overrides. */
  readonly clientOverridePolicy: ClientOverridePolicy;
  /** This worker's metrics (GET /metrics serves them). */
  readonly metrics: ConnectMetrics;
  /** Each source connector's offset store (its own offsets.storage.topic or the worker's). */
  readonly offsetStores: ConnectorOffsetStores;
  /** End offsets for the sink tasks' lag, one request per topic per scrape between them. */
  private readonly endOffsets = adminEndOffsets(() => this.adminClient());

  constructor(private readonly o: WorkerOptions) {
    this.workerId = o.workerId;
    this.exactlyOnce = exactlyOnceMode(o.config);
    this.clientOverridePolicy = overridePolicy(o.config);
    this.metrics = o.metrics ?? new ConnectMetrics({ clock: o.clock ?? systemClock });
    // Task states feed connector-task-metrics on their way to the herder.
    this.o = { ...o, status: this.metrics.statusListener(o.status) };
    this.metrics.worker.view = {
      connectorCount: () => this.connectors.size,
      taskCount: () => this.tasks.size,
    };
    this.providers = o.configProviders ?? ConfigProviders.fromWorkerConfig(o.config);
    this.clock = o.clock ?? systemClock;
    this.timers = o.timers ?? systemTimers;
    this.logger = o.logger ?? getLogger('connect.worker');
    this.kafka = o.kafka ?? createKafka(o.config, this.logger);
    this.offsetStores = new ConnectorOffsetStores({
      workerStore: o.offsetStore,
      workerTopic: (o.config['offset.storage.topic'] as string | undefined) ?? null,
      topics: o.connectorOffsetTopics ?? null,
      logger: this.logger,
    });
  }

  async start(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    this.admin = admin;
  }

  /**
   * Fences the transactional producers of tasks 0..taskCount-1 of a connector
   * (Kafka's Worker.fenceZombies): none of them can write or commit afterwards.
   */
  async fenceZombies(connector: string, taskCount: number): Promise<void> {
    const groupId = String(this.o.config['group.id'] ?? '');
    const ids = Array.from({ length: taskCount }, (_, task) =>
      taskTransactionalId(groupId, { connector, task }),
    );
    this.logger.info(
      { connector, transactionalIds: ids },
      `Fencing out ${taskCount} task producers of ${connector}`,
    );
    await fenceProducers(
      (this.o.config['bootstrap.servers'] as string[] | undefined) ?? [],
      ids,
      `connect-fencing-${connector}`,
    );
  }

  /** What resolves config references for this worker (config-providers.ts). */
  get configProviders(): ConfigProviders {
    return this.providers;
  }

  /** The admin client, for offsets of sink connectors and cluster id (after start). */
  adminClient(): Admin {
    if (this.admin === null) throw new Error('Worker.adminClient() before start()');
    return this.admin;
  }

  /**
   * A client on this project's protocol codec, for group requests kafkajs's admin
   * lacks (committing a sink's offsets without joining its group); made on first use.
   */
  clusterClient(): ClusterClient {
    if (this.admin === null) throw new Error('Worker.clusterClient() before start()');
    this.cluster ??= new ClusterClient(this.o.config['bootstrap.servers'] as string[], {
      clientId: `${(this.o.config['client.id'] as string | undefined) || 'connect-worker'}-admin`,
      requestTimeoutMs: (this.o.config['request.timeout.ms'] as number | undefined) ?? 40_000,
    });
    return this.cluster;
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
      this.metrics.worker.recordConnectorStartup(false);
      this.o.status.connectorState(name, 'FAILED', String((e as Error).message));
      return false;
    }
    // Validation refused likely typos; what is left reaches the connector unread by us.
    for (const key of unlistedConnectorKeys(this.o.plugins, manifest, config)) {
      this.logger.warn(unusedKeyMessage(name, key));
    }
    let resolved: ConnectorConfig;
    try {
      resolved = this.providers.resolve(config);
    } catch (e) {
      this.metrics.worker.recordConnectorStartup(false);
      this.o.status.connectorState(name, 'FAILED', (e as Error).message);
      return false;
    }
    const wc = this.newWorkerConnector(name, manifest, resolved, onReconfigure);
    this.connectors.set(name, wc);
    const started = await wc.transitionTo(target);
    this.metrics.worker.recordConnectorStartup(started);
    return started;
  }

  private newWorkerConnector(
    name: string,
    manifest: SourceConnectorManifest | SinkConnectorManifest,
    config: ConnectorConfig,
    onReconfigure: () => void,
  ): WorkerConnector {
    return new WorkerConnector({
      name,
      type: manifest.type,
      connector: manifest.createConnector(),
      config,
      offsetReader: new ConnectorOffsetReader(
        name,
        this.offsetStores.onDemand(`connector ${name}`, config),
      ),
      status: this.o.status,
      logger: this.logger,
      onReconfigure,
      timers: this.timers,
      startTimeoutMs: this.timeoutMs('connector.start.timeout.ms', DEFAULT_START_TIMEOUT_MS),
      stopTimeoutMs: this.stopTimeoutMs,
      taskClass: taskClassName(manifest.className),
    });
  }

  private timeoutMs(key: string, fallback: number): number {
    return (this.o.config[key] as number | undefined) ?? fallback;
  }

  /** task.shutdown.graceful.timeout.ms: every stop, and connectors' deleted(). */
  private get stopTimeoutMs(): number {
    return this.timeoutMs('task.shutdown.graceful.timeout.ms', DEFAULT_STOP_TIMEOUT_MS);
  }

  isConnectorRunning(name: string): boolean {
    return this.connectors.get(name)?.isRunning ?? false;
  }

  hasConnector(name: string): boolean {
    return this.connectors.has(name);
  }

  /**
   * The connector's task configs for its `tasks.max`, with the config references of
   * `config` (the stored one) put back in place of their values (config-providers.ts).
   */
  async connectorTaskConfigs(name: string, config: ConnectorConfig): Promise<TaskConfig[]> {
    const wc = this.connectors.get(name);
    if (wc === undefined)
      throw new ConnectException(`Connector ${name} is not running on this worker`);
    const maxTasks = Number(config['tasks.max'] ?? '1') || 1;
    const enforce = (config['tasks.max.enforce'] ?? 'true').trim().toLowerCase() !== 'false';
    return ConfigProviders.restoreReferences(config, await wc.taskConfigs(maxTasks, enforce));
  }

  /**
   * Tasks take the target at once; the connector's transition may wait behind its start
   * (at most connector.start.timeout.ms), which the returned promise includes.
   */
  async setConnectorTargetState(name: string, target: TargetState): Promise<void> {
    for (const slot of this.tasks.values()) {
      if (slot.id.connector !== name) continue;
      // A task still being built takes it once it has started (runTask).
      slot.target = target;
      slot.runner?.setTargetState(target);
    }
    await this.connectors.get(name)?.transitionTo(target);
  }

  /** Stop the connector instance; never waits behind a hung start (worker-connector.ts). */
  async stopConnector(name: string): Promise<void> {
    const wc = this.connectors.get(name);
    if (wc === undefined) return;
    this.connectors.delete(name);
    await wc.stop();
  }

  /**
   * The connector was deleted (not stopped, paused or moved): stop this worker's tasks
   * of it and the connector, then call its `deleted(config)` hook, step 5 of
   * connector.ts, under task.shutdown.graceful.timeout.ms. A connector that is STOPPED
   * or FAILED gets it too; when this worker holds no usable instance (none, or one
   * with a call still hung) a fresh one is made from the manifest for the call.
   * `config` defaults to the config of the instance this worker runs; without either
   * there is nothing to call. Never rejects: errors are logged, the delete goes on.
   */
  async deleteConnector(name: string, config?: ConnectorConfig): Promise<void> {
    await this.stopTasks(this.taskIds(name));
    const wc = this.connectors.get(name);
    await this.stopConnector(name);
    let deletedConfig = wc?.config;
    if (config !== undefined) {
      try {
        deletedConfig = this.providers.resolve(config);
      } catch (e) {
        this.logger.error(
          { connector: name },
          `Connector ${name} is deleted without its deleted() hook: ${(e as Error).message}`,
        );
        return;
      }
    }
    if (deletedConfig === undefined) return;
    let target = wc;
    if (target === undefined || target.hasCallInFlight) {
      let manifest: SourceConnectorManifest | SinkConnectorManifest;
      try {
        manifest = this.manifest(deletedConfig);
      } catch (e) {
        this.logger.error(
          { err: e, connector: name },
          `Connector ${name} is deleted without its deleted() hook: its plugin is not installed`,
        );
        return;
      }
      target = this.newWorkerConnector(name, manifest, deletedConfig, () => {});
    }
    await target.deleted();
  }

  taskIds(connector?: string): ConnectorTaskId[] {
    return [...this.tasks.values()]
      .map((t) => t.id)
      .filter((id) => connector === undefined || id.connector === connector);
  }

  /**
   * Start one task; resolves true once it is RUNNING (or PAUSED), false when it failed,
   * was stopped while starting, or passed task.start.timeout.ms (see the header). The
   * task is this worker's from the call on: stopTasks may end it at any moment.
   */
  startTask(
    id: ConnectorTaskId,
    connectorConfig: ConnectorConfig,
    taskConfig: TaskConfig,
    target: TargetState,
    preflight?: ExactlyOncePreflight,
  ): Promise<boolean> {
    const key = taskIdString(id);
    if (this.tasks.has(key))
      return Promise.reject(new ConnectException(`Task ${key} already running on this worker`));
    const slot = new TaskSlot(id, target, new StatusGate(this.o.status));
    this.tasks.set(key, slot);
    this.metrics.addTask(id, this.connectorType(connectorConfig) === 'source' ? 'source' : 'sink');
    const startMs = this.timeoutMs('task.start.timeout.ms', DEFAULT_START_TIMEOUT_MS);
    const cancelDeadline = this.timers.schedule(startMs, () => this.abandonStart(slot, startMs));
    return this.runTask(slot, connectorConfig, taskConfig, target, preflight)
      .then((started) => {
        // Stopped while starting is neither a success nor a failure.
        this.metrics.worker.recordTaskStartup(started ? true : slot.isEnded ? undefined : false);
        return started;
      })
      .finally(cancelDeadline);
  }

  private async runTask(
    slot: TaskSlot,
    connectorConfig: ConnectorConfig,
    taskConfig: TaskConfig,
    target: TargetState,
    preflight: ExactlyOncePreflight | undefined,
  ): Promise<boolean> {
    const key = taskIdString(slot.id);
    let runner: RunningTask;
    try {
      runner = await this.buildTask(
        slot.id,
        this.providers.resolve(connectorConfig),
        this.providers.resolve(taskConfig),
        target,
        slot.gate,
        preflight,
      );
    } catch (e) {
      this.logger.error({ err: e }, `Failed to create task ${key}`);
      slot.gate.taskState(slot.id, 'FAILED', (e as Error).stack ?? String(e));
      // Nothing runs: the task is not this worker's any more (as before it was built).
      if (this.tasks.get(key) === slot) {
        this.tasks.delete(key);
        this.metrics.removeTask(slot.id);
      }
      slot.end();
      slot.gate.close();
      return false;
    }
    slot.runner = runner;
    if (slot.isEnded) {
      // Stopped or abandoned while it was being built: release what it opened.
      void this.stopRunner(key, runner).finally(() => slot.gate.close());
      return false;
    }
    await Promise.race([runner.start(), slot.whenEnded]);
    if (slot.isEnded) return false;
    if (slot.target !== target) runner.setTargetState(slot.target);
    return !runner.isFailed;
  }

  /** The task did not start within its deadline: FAILED, out of this worker, abandoned. */
  private abandonStart(slot: TaskSlot, startMs: number): void {
    if (slot.isEnded) return;
    const key = taskIdString(slot.id);
    slot.end();
    if (this.tasks.get(key) === slot) {
      this.tasks.delete(key);
      this.metrics.removeTask(slot.id);
    }
    const error = new ConnectException(
      `Task ${key} did not start within ${startMs} ms (task.start.timeout.ms); its start was abandoned`,
    );
    this.logger.error({ err: error }, error.message);
    slot.gate.taskState(slot.id, 'FAILED', errorTrace(error));
    slot.gate.close();
    // Its clients close now; the task's stop() follows its start if that ever returns.
    if (slot.runner !== null) void this.stopRunner(key, slot.runner);
  }

  /** runner.stop() within task.shutdown.graceful.timeout.ms; never rejects. */
  private async stopRunner(key: string, runner: RunningTask): Promise<void> {
    const timeoutMs = this.stopTimeoutMs;
    const stopping = runner.stop().catch((e: unknown) => {
      this.logger.error({ err: e }, `Task ${key} failed to stop`);
    });
    if (!(await settlesWithin(stopping, timeoutMs, this.timers))) {
      this.logger.error(
        `Graceful stop of task ${key} failed: it did not stop within ${timeoutMs} ms (task.shutdown.graceful.timeout.ms); abandoned it`,
      );
    }
  }

  /** Stop tasks and wait for them (each up to task.shutdown.graceful.timeout.ms). */
  async stopTasks(ids: readonly ConnectorTaskId[]): Promise<void> {
    await Promise.all(
      ids.map(async (id) => {
        const key = taskIdString(id);
        const slot = this.tasks.get(key);
        if (slot === undefined) return;
        this.tasks.delete(key);
        slot.end();
        if (slot.runner === null) {
          // Still being built: runTask releases it once built.
          slot.gate.taskState(id, 'UNASSIGNED');
        } else {
          await this.stopRunner(key, slot.runner);
        }
        // Whatever the instance does from now on (an abandoned stop that settles late)
        // must not overwrite the state of the next one.
        slot.gate.close();
        if (!this.tasks.has(key)) this.metrics.removeTask(id);
      }),
    );
  }

  /** Stop everything this worker runs, then its admin client. */
  async stop(): Promise<void> {
    await this.stopTasks(this.taskIds());
    await Promise.all([...this.connectors.keys()].map((name) => this.stopConnector(name)));
    await this.admin?.disconnect();
    this.admin = null;
    this.cluster?.close();
    this.cluster = null;
  }

  private operator(
    id: ConnectorTaskId,
    config: ConnectorConfig,
    extra: ErrorReporter[],
    metrics: TaskMetrics,
  ) {
    const errors = errorHandlingConfig(config);
    const counted = metrics.errors;
    // First, so task-error-metrics count every report whatever the others do.
    const reporters: ErrorReporter[] = [
      {
        report: async () => {
          counted.recordError();
          if (errors.logEnable) counted.recordErrorLogged();
        },
      },
    ];
    if (errors.logEnable)
      reporters.push(new LogReporter(taskIdString(id), this.logger, errors.logIncludeMessages));
    reporters.push(...extra);
    const operator = new RetryWithToleranceOperator(errors, reporters, {
      now: () => this.clock.now(),
      sleep: (ms) => new Promise((resolve) => this.timers.schedule(ms, () => resolve(true))),
    });
    counted.skippedRecords = () => operator.toleratedErrors;
    return operator;
  }

  /** The task's metrics, registered by startTask (again if it was removed meanwhile). */
  private taskMetrics(id: ConnectorTaskId, type: 'source' | 'sink'): TaskMetrics {
    return this.metrics.task(id) ?? this.metrics.addTask(id, type);
  }

  private async buildTask(
    id: ConnectorTaskId,
    connectorConfig: ConnectorConfig,
    taskConfig: TaskConfig,
    target: TargetState,
    status: StatusListener,
    preflight: ExactlyOncePreflight | undefined,
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
      status,
      clock: this.clock,
      timers: this.timers,
      logger: this.logger,
      offsetFlushIntervalMs: (worker['offset.flush.interval.ms'] as number | undefined) ?? 60_000,
      gracefulShutdownMs:
        (worker['task.shutdown.graceful.timeout.ms'] as number | undefined) ?? 5000,
    };
    const metrics = this.taskMetrics(id, manifest.type);
    if (manifest.type === 'source') {
      const settings = producerSettings(clientConfig('producer', worker, connectorConfig), worker);
      const topicCreation = TopicCreation.fromConfig(
        worker['topic.creation.enable'] !== false,
        withTopicCreationDefaults(manifest, connectorConfig),
      );
      const bootstrap = (worker['bootstrap.servers'] as string[] | undefined) ?? [];
      const clientId = settings.clientId ?? `connector-producer-${id.connector}-${id.task}`;
      const ownOffsetsTopic = this.offsetStores.ownTopic(connectorConfig);
      let producer: KafkaSourceProducer;
      let exactlyOnce: WorkerSourceTaskOptions['exactlyOnce'];
      if (this.exactlyOnce === 'enabled') {
        if (preflight === undefined)
          throw new ConnectException(
            `Task ${taskIdString(id)} cannot run exactly-once without its herder's zombie fencing`,
          );
        const transactionalId = taskTransactionalId(String(worker['group.id'] ?? ''), id);
        const transactional = new KafkaTransactionalSourceProducer(
          bootstrap,
          clientId,
          settings,
          this.logger,
          transactionalId,
        );
        producer = transactional;
        exactlyOnce = {
          producer: transactional,
          transactionalId,
          boundaries: new TransactionBoundaries(
            transactionBoundaryOf(connectorConfig),
            transactionIntervalMs(connectorConfig, common.offsetFlushIntervalMs),
            this.clock.now(),
          ),
          offsetsTopic:
            ownOffsetsTopic ?? String(worker['offset.storage.topic'] ?? 'connect-offsets'),
          ...(ownOffsetsTopic !== null
            ? { copyOffsetsToWorker: (entries) => offsets.store.copyToWorker(entries) }
            : {}),
          beforeProducerInit: () => preflight.beforeProducerInit(),
          afterProducerInit: () => preflight.afterProducerInit(),
        };
      } else {
        producer = new KafkaSourceProducer(bootstrap, clientId, settings, this.logger);
      }
      // Which delivery the task gets, and why not the one its connector asked for.
      const notice = taskDeliveryNotice(
        taskIdString(id),
        this.exactlyOnce,
        manifest.createConnector(),
        connectorConfig,
      );
      if (notice !== null) this.logger[notice.level](notice.message);
      // Held for the task's life: the runner releases it when it closes.
      let offsets: OffsetStoreLease;
      try {
        offsets = await this.offsetStores.acquire(taskIdString(id), connectorConfig);
      } catch (e) {
        await producer.disconnect();
        throw e;
      }
      return new WorkerSourceTask({
        ...common,
        task: manifest.createTask(),
        operator: this.operator(id, connectorConfig, [], metrics),
        metrics,
        producer,
        ...(exactlyOnce !== undefined ? { exactlyOnce } : {}),
        offsetReader: new ConnectorOffsetReader(id.connector, offsets.store),
        offsetWriter: new OffsetStorageWriter(id.connector, offsets.store),
        onClosed: () => offsets.release(),
        bootstrapServers: bootstrap,
        ...(notice?.trace !== undefined ? { deliveryTrouble: notice.trace } : {}),
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
          (topic, m) => {
            metrics.errors.recordDeadLetterQueueProduceRequest();
            return dlq
              .send({
                topic,
                acks: -1,
                messages: [{ key: m.key, value: m.value, headers: m.headers }],
              })
              .then(
                () => {},
                (e: unknown) => {
                  metrics.errors.recordDeadLetterQueueProduceFailure();
                  throw e;
                },
              );
          },
        ),
      );
    }
    const consumer = new GroupConsumer({
      client: new ClusterClient(worker['bootstrap.servers'] as string[], {
        clientId:
          consumerKeys['client.id']?.trim() || `connector-consumer-${id.connector}-${id.task}`,
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
      operator: this.operator(id, connectorConfig, extra, metrics),
      consumer,
      metrics,
      maxPollRecords: numberKey(consumerKeys, 'max.poll.records', 500),
      endOffsets: this.endOffsets,
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

/**
 * The `task.class` of a connector's task configs. Kafka Connect puts the task's Java
 * class name there (tools show it, e.g. kcctl's describe); our plugins have no task
 * class names of their own, so it is the connector's name with its Connector suffix
 * replaced by Task (connect.file.FileStreamSourceConnector ->
 * connect.file.FileStreamSourceTask), as Kafka's own connectors name their tasks.
 */
export function taskClassName(connectorClass: string): string {
  return connectorClass.endsWith('Connector')
    ? `${connectorClass.slice(0, -'Connector'.length)}Task`
    : `${connectorClass}Task`;
}
