/**
 * StandaloneHerder: the Herder of `connect standalone`, one worker with no group.
 * Connector configs, task configs and target states live in memory
 * (MemoryConfigBackingStore: the connector files are written there at start, REST
 * creations last until the process ends, as in Kafka's standalone mode); source
 * offsets live in the worker's offset store (the offset file); states in the memory
 * status store, stamped with this worker's id.
 *
 * Every request runs on one SerialExecutor, so a connector is never started, stopped
 * or reconfigured by two requests at once. Life of a connector:
 *   put config  -> validate -> store -> (replace: stop tasks and connector) -> start
 *   start       -> worker.startConnector(target), then per target: STOPPED: no tasks
 *                  (task configs emptied, as Kafka does); PAUSED: tasks from the
 *                  stored configs, paused; RUNNING: in a job of the loop once the
 *                  start returned, taskConfigs(tasks.max) -> store -> start each task
 *   reconfigure -> (connector's request) new task configs; tasks restarted only if
 *                  they differ from the stored ones
 *   delete      -> stop tasks and connector -> the connector's deleted(config) hook
 *                  (worker.deleteConnector) -> forget config and states
 * Plugin starts run off the loop (DESIGN.md: one plugin never stops the worker): the
 * loop launches connector and task starts and never awaits them, so a start that
 * never returns holds up no other request; the Worker fails it at its deadline. So a
 * create, update, restart, pause or resume answers once it is stored and launched,
 * as Kafka's distributed herder answers (its tasks follow; its status tells how it
 * went), never after a plugin call that may hang: a request in flight would hold up
 * the REST server's close, hence the shutdown. What requests and the loop do await
 * is bounded: stops (task.shutdown.graceful.timeout.ms; a stop interrupts a hung
 * start) and task config generation (connector.start.timeout.ms).
 * Offsets may be altered or reset only while the connector is STOPPED.
 */
import type { Logger } from '../../util/logger.ts';
import type { ValidationContext } from '../api/connector.ts';
import type { ConfigProviders } from '../runtime/config-providers.ts';
import {
  type ConfigInfos,
  validationContext,
  type WorkerValidation,
} from '../runtime/config-validation.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import { SerialExecutor } from '../runtime/serial-executor.ts';
import type { Worker } from '../runtime/worker.ts';
import type { MemoryConfigBackingStore } from '../storage/memory-config-backing-store.ts';
import type { MemoryStatusBackingStore } from '../storage/memory-status-backing-store.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import {
  alterConnectorOffsets,
  type OffsetContext,
  readConnectorOffsets,
  resetConnectorOffsets,
} from './connector-offsets.ts';
import {
  type ActiveTopicsInfo,
  type ConnectorConfigMap,
  type ConnectorInfo,
  type ConnectorOffset,
  type ConnectorOffsets,
  type ConnectorStateInfo,
  type ConnectorTaskId,
  type Created,
  type Herder,
  HerderError,
  notFound,
  type OffsetsMessage,
  type RestartRequest,
  type TargetState,
  type TaskInfo,
  type TaskState,
} from './herder.ts';
import {
  connectorNotStopped,
  requireValidConfig,
  validateWithReferences,
} from './herder-checks.ts';

export interface StandaloneHerderOptions {
  worker: Worker;
  plugins: PluginRegistry;
  configs: MemoryConfigBackingStore;
  status: MemoryStatusBackingStore;
  offsetStore: OffsetBackingStore;
  logger: Logger;
  /** Applies a logger level locally (PUT /admin/loggers with scope=cluster). */
  setLoggerLevel?: (namespace: string, level: string) => void;
}

export class StandaloneHerder implements Herder {
  private readonly serial = new SerialExecutor();
  private readonly activeTopics = new Map<string, Set<string>>();
  /**
   * Bumped whenever a connector instance is started: the job that follows a start
   * acts only if no later start, stop or delete of the connector came in between.
   */
  private readonly starts = new Map<string, number>();
  private startSeq = 0;
  private stopped = false;

  constructor(private readonly o: StandaloneHerderOptions) {}

  /** Record that a connector used a topic (fed by the worker's status listener). */
  topicUsed(connector: string, topic: string): void {
    let topics = this.activeTopics.get(connector);
    if (topics === undefined) {
      topics = new Set();
      this.activeTopics.set(connector, topics);
    }
    topics.add(topic);
  }

  /** Stop every connector and task (in parallel, each bounded); the worker is its owner's. */
  stop(): Promise<void> {
    return this.serial.run(async () => {
      this.stopped = true;
      await Promise.all(this.o.configs.names().map((name) => this.stopConnectorAndTasks(name)));
    });
  }

  /** The stored connector; `unknown` is the request's not-found error (herder.ts's notFound). */
  private entry(name: string, unknown: (name: string) => HerderError = notFound.connector) {
    const entry = this.o.configs.get(name);
    if (entry === undefined) throw unknown(name);
    return entry;
  }

  private info(name: string): ConnectorInfo {
    const entry = this.entry(name);
    return {
      name,
      config: { ...entry.config },
      tasks: entry.taskConfigs.map((_, task) => ({ connector: name, task })),
      type: this.o.worker.connectorType(entry.config),
    };
  }

  async connectors(): Promise<string[]> {
    return this.o.configs.names();
  }

  async connectorInfo(name: string): Promise<ConnectorInfo> {
    return this.info(name);
  }

  async connectorConfig(name: string): Promise<ConnectorConfigMap> {
    return { ...this.entry(name).config };
  }

  putConnectorConfig(
    name: string,
    config: ConnectorConfigMap,
    allowReplace: boolean,
    initialState?: TargetState,
  ): Promise<Created<ConnectorInfo>> {
    return this.serial.run(async () => {
      const full = { ...config, name };
      requireValidConfig(
        this.o.worker.configProviders,
        this.o.plugins,
        full,
        this.validationContext(name),
        this.workerValidation,
      );
      const exists = this.o.configs.has(name);
      if (exists && !allowReplace)
        throw new HerderError('already-exists', `Connector ${name} already exists`);
      if (exists) await this.stopConnectorAndTasks(name);
      this.o.configs.putConnectorConfig(
        name,
        full,
        exists ? undefined : (initialState ?? 'RUNNING'),
      );
      this.startConnector(name);
      return { created: !exists, result: this.info(name) };
    });
  }

  async patchConnectorConfig(
    name: string,
    patch: Record<string, string | null>,
  ): Promise<Created<ConnectorInfo>> {
    const current = await this.connectorConfig(name);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete current[k];
      else current[k] = v;
    }
    return this.putConnectorConfig(name, current, true);
  }

  deleteConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name);
      this.starts.delete(name);
      // Tasks, then the connector, then its deleted(config) hook; bounded, never throws.
      await this.o.worker.deleteConnector(name, entry.config);
      this.o.configs.remove(name);
      this.o.status.connectorDeleted(name);
      this.activeTopics.delete(name);
    });
  }

  async connectorStatus(name: string): Promise<ConnectorStateInfo> {
    const entry = this.entry(name, notFound.connectorStatus);
    const workerId = this.o.worker.workerId;
    const tasks: TaskState[] = entry.taskConfigs.map(
      (_, task) =>
        this.o.status.task({ connector: name, task }) ?? {
          id: task,
          state: 'UNASSIGNED',
          worker_id: workerId,
        },
    );
    return {
      name,
      connector: this.o.status.connector(name) ?? { state: 'UNASSIGNED', worker_id: workerId },
      tasks,
      type: this.o.worker.connectorType(entry.config),
    };
  }

  async taskConfigs(name: string): Promise<TaskInfo[]> {
    return this.entry(name).taskConfigs.map((config, task) => ({
      id: { connector: name, task },
      config: { ...config },
    }));
  }

  async taskStatus(connector: string, task: number): Promise<TaskState> {
    // AbstractHerder.taskStatus: one text for an unknown connector and an unknown task.
    const entry = this.o.configs.get(connector);
    if (entry === undefined || task < 0 || task >= entry.taskConfigs.length) {
      throw notFound.taskStatus(connector, task);
    }
    return (
      this.o.status.task({ connector, task }) ?? {
        id: task,
        state: 'UNASSIGNED',
        worker_id: this.o.worker.workerId,
      }
    );
  }

  restartConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name);
      await this.o.worker.stopConnector(name);
      const { generation, started } = this.launchConnector(name, entry.config, entry.targetState);
      // Its tasks keep running; a connector restarted before it ever generated task
      // configs (its first start failed) generates them now.
      void started
        .then((ok) =>
          this.serial.run(async () => {
            const now = this.o.configs.get(name);
            if (!ok || now?.taskConfigs.length !== 0 || this.starts.get(name) !== generation)
              return;
            await this.reconfigure(name);
          }),
        )
        .catch((e: unknown) => this.o.logger.error({ err: e }, `Reconfiguring ${name} failed`));
    });
  }

  async restartConnectorAndTasks(request: RestartRequest): Promise<ConnectorStateInfo> {
    const name = request.connector;
    this.entry(name, notFound.restart);
    const before = await this.connectorStatus(name);
    const restartConnector = !request.onlyFailed || before.connector.state === 'FAILED';
    const tasks = request.includeTasks
      ? before.tasks
          .filter((t) => !request.onlyFailed || t.state === 'FAILED' || t.state === 'UNASSIGNED')
          .map((t) => t.id)
      : [];
    if (restartConnector) this.o.status.connectorState(name, 'RESTARTING');
    for (const task of tasks) this.o.status.taskState({ connector: name, task }, 'RESTARTING');
    const planned = await this.connectorStatus(name);
    void this.serial
      .run(async () => {
        const entry = this.o.configs.get(name);
        if (entry === undefined) return;
        const ids = tasks.map((task) => ({ connector: name, task }));
        await this.o.worker.stopTasks(ids);
        if (restartConnector) {
          await this.o.worker.stopConnector(name);
          this.launchConnector(name, entry.config, entry.targetState);
        }
        if (entry.targetState !== 'STOPPED') {
          for (const id of ids) {
            const config = entry.taskConfigs[id.task];
            if (config !== undefined) this.launchTask(id, entry.config, config, entry.targetState);
          }
        }
      })
      .catch((e: unknown) => this.o.logger.error({ err: e }, `Restart of ${name} failed`));
    return planned;
  }

  restartTask(connector: string, task: number): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(connector);
      const config = entry.taskConfigs[task];
      if (config === undefined) throw notFound.standaloneTask(connector, task);
      const id = { connector, task };
      await this.o.worker.stopTasks([id]);
      this.launchTask(id, entry.config, config, entry.targetState);
    });
  }

  /** A connector's transition, launched from the loop; its failure is the connector's FAILED. */
  private transition(name: string, target: TargetState): Promise<void> {
    return this.o.worker
      .setConnectorTargetState(name, target)
      .catch((e: unknown) =>
        this.o.logger.error({ err: e }, `Connector ${name} failed to change state`),
      );
  }

  pauseConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name, notFound.targetState);
      if (entry.targetState === 'PAUSED') return;
      this.o.configs.putTargetState(name, 'PAUSED');
      if (entry.targetState === 'STOPPED') {
        // From STOPPED, PAUSED means: tasks exist again, paused.
        await this.stopConnectorAndTasks(name);
        this.startConnector(name);
        return;
      }
      // Tasks pause at once; the connector follows (202, as Kafka answers it).
      void this.transition(name, 'PAUSED');
    });
  }

  resumeConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name, notFound.targetState);
      if (entry.targetState === 'RUNNING') return;
      const wasStopped = entry.targetState === 'STOPPED';
      this.o.configs.putTargetState(name, 'RUNNING');
      if (wasStopped || !this.o.worker.hasConnector(name)) {
        await this.stopConnectorAndTasks(name);
        this.startConnector(name);
        return;
      }
      const resumed = this.transition(name, 'RUNNING');
      // A connector that was paused before its first task configs were generated.
      if (entry.taskConfigs.length === 0) {
        void resumed
          .then(() => this.serial.run(() => this.reconfigure(name)))
          .catch((e: unknown) => this.o.logger.error({ err: e }, `Reconfiguring ${name} failed`));
      }
    });
  }

  /** As Kafka's standalone herder: there is no exactly-once support to fence for. */
  async fenceZombies(_name: string): Promise<void> {
    throw new HerderError(
      'bad-request',
      'Kafka Connect in standalone mode does not support exactly-once source connectors.',
    );
  }

  /** Answers once the connector is STOPPED: bounded, since a stop interrupts a hung start. */
  stopConnector(name: string): Promise<void> {
    const stopping = this.serial.run(async () => {
      // The distributed herder's 404. Kafka's standalone herder answers 500 here ("No
      // connector `x` configured", its memory config store's IllegalArgumentException
      // that nothing maps): an accident, and a server error for a client's mistake.
      const entry = this.entry(name, notFound.targetState);
      if (entry.targetState === 'STOPPED') return { wait: Promise.resolve() };
      this.o.configs.putTargetState(name, 'STOPPED');
      await this.o.worker.stopTasks(this.o.worker.taskIds(name));
      this.o.status.trimTasks(name, 0);
      this.o.configs.putTaskConfigs(name, []);
      // Wrapped: a promise the job returned would be awaited on the loop.
      return { wait: this.transition(name, 'STOPPED') };
    });
    return stopping.then(({ wait }) => wait);
  }

  /** As AbstractHerder: an unknown connector has used no topics (200, not 404). */
  async connectorActiveTopics(name: string): Promise<ActiveTopicsInfo> {
    return { topics: [...(this.activeTopics.get(name) ?? [])].sort() };
  }

  /** As AbstractHerder: nothing to forget for an unknown connector (202, not 404). */
  async resetConnectorActiveTopics(name: string): Promise<void> {
    this.activeTopics.delete(name);
  }

  async connectorOffsets(name: string): Promise<ConnectorOffsets> {
    return readConnectorOffsets(this.offsetContext, name, this.entry(name).config);
  }

  private requireStopped(name: string): ConnectorConfigMap {
    const entry = this.entry(name);
    if (entry.targetState !== 'STOPPED' || this.o.worker.taskIds(name).length > 0) {
      throw connectorNotStopped(name);
    }
    return entry.config;
  }

  alterConnectorOffsets(name: string, offsets: ConnectorOffset[]): Promise<OffsetsMessage> {
    return this.serial.run(async () =>
      alterConnectorOffsets(this.offsetContext, name, this.requireStopped(name), offsets),
    );
  }

  resetConnectorOffsets(name: string): Promise<OffsetsMessage> {
    return this.serial.run(async () =>
      resetConnectorOffsets(this.offsetContext, name, this.requireStopped(name)),
    );
  }

  /** What the shared offset operations (connector-offsets.ts) need from this herder. */
  private get offsetContext(): OffsetContext {
    return {
      plugins: this.o.plugins,
      offsetStore: this.o.offsetStore,
      admin: () => this.o.worker.adminClient(),
      cluster: () => this.o.worker.clusterClient(),
      providers: this.o.worker.configProviders,
    };
  }

  async validateConnectorConfig(config: ConnectorConfigMap): Promise<ConfigInfos> {
    return validateWithReferences(
      this.o.worker.configProviders,
      this.o.plugins,
      config,
      this.validationContext(config.name),
      this.workerValidation,
    );
  }

  /** Standalone workers refuse exactly-once sources at start, so validation never offers it. */
  private get workerValidation(): WorkerValidation {
    return { exactlyOnceSource: false, clientOverridePolicy: this.o.worker.clientOverridePolicy };
  }

  /** What a connector's validate hook knows of the others: every stored connector but `name`. */
  private validationContext(name: string | undefined): ValidationContext {
    const configs = this.o.configs;
    return validationContext(
      name,
      configs.names().map((other) => [other, configs.get(other)?.config ?? {}] as const),
    );
  }

  healthCheck(): Promise<void> {
    return this.serial.run(() => undefined);
  }

  /** Standalone herders serve requests from construction on. */
  isReady(): boolean {
    return true;
  }

  configProviders(): ConfigProviders {
    return this.o.worker.configProviders;
  }

  plugins(): PluginRegistry {
    return this.o.plugins;
  }

  async kafkaClusterId(): Promise<string> {
    return (await this.o.worker.adminClient().describeCluster()).clusterId;
  }

  async setClusterLoggerLevel(namespace: string, level: string): Promise<void> {
    this.o.setLoggerLevel?.(namespace, level);
  }

  // ---- running connectors -------------------------------------------------------------

  /**
   * Start a stored connector (on the loop, which it does not hold up): the start runs
   * off the loop, and once it settled a job of the loop sets up the tasks per the
   * target state (see the header).
   */
  private startConnector(name: string): void {
    if (this.stopped) return;
    const entry = this.entry(name);
    const { generation, started } = this.launchConnector(name, entry.config, entry.targetState);
    if (entry.targetState === 'STOPPED') {
      this.o.configs.putTaskConfigs(name, []);
      this.o.status.trimTasks(name, 0);
      return;
    }
    // PAUSED: its tasks from the stored configs, paused, whatever its start does.
    if (entry.targetState === 'PAUSED') {
      this.startTasks(name);
      return;
    }
    // RUNNING: task configs come from the started connector.
    void started
      .then((ok) =>
        this.serial.run(async () => {
          const now = this.o.configs.get(name);
          if (this.stopped || now === undefined || this.starts.get(name) !== generation) return;
          if (ok && now.targetState === 'RUNNING') {
            const configs = await this.generateTaskConfigs(name);
            if (configs !== undefined) {
              this.o.configs.putTaskConfigs(name, configs);
              this.o.status.trimTasks(name, configs.length);
            }
          }
          this.startTasks(name);
        }),
      )
      .catch((e: unknown) =>
        this.o.logger.error({ err: e }, `Starting the tasks of ${name} failed`),
      );
  }

  /** worker.startConnector without waiting; `started` settles when the start did. */
  private launchConnector(
    name: string,
    config: ConnectorConfigMap,
    target: TargetState,
  ): { generation: number; started: Promise<boolean> } {
    const generation = ++this.startSeq;
    this.starts.set(name, generation);
    const started = this.o.worker
      .startConnector(name, config, target, () => this.requestReconfiguration(name))
      .catch((e: unknown) => {
        this.o.logger.error({ err: e }, `Connector ${name} could not be started`);
        return false;
      });
    return { generation, started };
  }

  /** worker.startTask without waiting: its state reaches the status store by itself. */
  private launchTask(
    id: ConnectorTaskId,
    connectorConfig: ConnectorConfigMap,
    taskConfig: ConnectorConfigMap,
    target: TargetState,
  ): void {
    void this.o.worker
      .startTask(id, connectorConfig, taskConfig, target)
      .catch((e: unknown) =>
        this.o.logger.error({ err: e }, `Task ${id.connector}-${id.task} could not be started`),
      );
  }

  private async generateTaskConfigs(name: string): Promise<ConnectorConfigMap[] | undefined> {
    const entry = this.entry(name);
    try {
      return (await this.o.worker.connectorTaskConfigs(name, entry.config)).map((c) => ({ ...c }));
    } catch (e) {
      this.o.logger.error({ err: e }, `Connector ${name} failed to generate task configs`);
      return undefined;
    }
  }

  private startTasks(name: string): void {
    const entry = this.entry(name);
    for (const [task, config] of entry.taskConfigs.entries()) {
      this.launchTask({ connector: name, task }, entry.config, config, entry.targetState);
    }
  }

  private async stopConnectorAndTasks(name: string): Promise<void> {
    // A start still to be followed up is superseded by this stop.
    this.starts.set(name, ++this.startSeq);
    await this.o.worker.stopTasks(this.o.worker.taskIds(name));
    await this.o.worker.stopConnector(name);
  }

  private requestReconfiguration(name: string): void {
    void this.serial
      .run(() => this.reconfigure(name))
      .catch((e: unknown) => this.o.logger.error({ err: e }, `Reconfiguring ${name} failed`));
  }

  /** New task configs from the connector; tasks restart only when they changed. */
  private async reconfigure(name: string): Promise<void> {
    const entry = this.o.configs.get(name);
    if (
      entry === undefined ||
      entry.targetState !== 'RUNNING' ||
      !this.o.worker.isConnectorRunning(name)
    )
      return;
    const configs = await this.generateTaskConfigs(name);
    if (configs === undefined || sameConfigs(configs, entry.taskConfigs)) return;
    await this.o.worker.stopTasks(this.o.worker.taskIds(name));
    this.o.configs.putTaskConfigs(name, configs);
    this.o.status.trimTasks(name, configs.length);
    this.startTasks(name);
  }
}

function sameConfigs(a: readonly ConnectorConfigMap[], b: readonly ConnectorConfigMap[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((c, i) => {
    const d = b[i] as ConnectorConfigMap;
    const keys = Object.keys(c);
    return keys.length === Object.keys(d).length && keys.every((k) => c[k] === d[k]);
  });
}
