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
 *   start       -> worker.startConnector(target) -> RUNNING: taskConfigs(tasks.max) ->
 *                  store -> start each task; PAUSED: tasks from the stored configs,
 *                  paused; STOPPED: no tasks (task configs emptied, as Kafka does)
 *   reconfigure -> (connector's request) new task configs; tasks restarted only if
 *                  they differ from the stored ones
 * Offsets may be altered or reset only while the connector is STOPPED.
 */
import type { Logger } from '../../util/logger.ts';
import { type ConfigInfos, validateConnectorConfig } from '../runtime/config-validation.ts';
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
  connectorNotFound,
  type Herder,
  HerderError,
  type OffsetsMessage,
  type RestartRequest,
  type TargetState,
  type TaskInfo,
  type TaskState,
} from './herder.ts';
import { connectorNotStopped, requireValidConfig } from './herder-checks.ts';

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

  /** Stop every connector and task; the worker itself is stopped by its owner. */
  stop(): Promise<void> {
    return this.serial.run(async () => {
      this.stopped = true;
      for (const name of this.o.configs.names()) await this.stopConnectorAndTasks(name);
    });
  }

  private entry(name: string) {
    const entry = this.o.configs.get(name);
    if (entry === undefined) throw connectorNotFound(name);
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
      requireValidConfig(this.o.plugins, full);
      const exists = this.o.configs.has(name);
      if (exists && !allowReplace)
        throw new HerderError('already-exists', `Connector ${name} already exists`);
      if (exists) await this.stopConnectorAndTasks(name);
      this.o.configs.putConnectorConfig(
        name,
        full,
        exists ? undefined : (initialState ?? 'RUNNING'),
      );
      await this.startConnector(name);
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
      this.entry(name);
      await this.stopConnectorAndTasks(name);
      this.o.configs.remove(name);
      this.o.status.connectorDeleted(name);
      this.activeTopics.delete(name);
    });
  }

  async connectorStatus(name: string): Promise<ConnectorStateInfo> {
    const entry = this.entry(name);
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
    const entry = this.entry(connector);
    if (task < 0 || task >= entry.taskConfigs.length) {
      throw new HerderError('not-found', `Task ${connector}-${task} not found`);
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
      await this.o.worker.startConnector(name, entry.config, entry.targetState, () =>
        this.requestReconfiguration(name),
      );
    });
  }

  async restartConnectorAndTasks(request: RestartRequest): Promise<ConnectorStateInfo> {
    const name = request.connector;
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
          await this.o.worker.startConnector(name, entry.config, entry.targetState, () =>
            this.requestReconfiguration(name),
          );
        }
        if (entry.targetState !== 'STOPPED') {
          for (const id of ids) {
            const config = entry.taskConfigs[id.task];
            if (config !== undefined)
              await this.o.worker.startTask(id, entry.config, config, entry.targetState);
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
      if (config === undefined)
        throw new HerderError('not-found', `Task ${connector}-${task} not found`);
      const id = { connector, task };
      await this.o.worker.stopTasks([id]);
      await this.o.worker.startTask(id, entry.config, config, entry.targetState);
    });
  }

  pauseConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name);
      if (entry.targetState === 'PAUSED') return;
      if (entry.targetState === 'STOPPED') {
        // From STOPPED, PAUSED means: tasks exist again, paused.
        this.o.configs.putTargetState(name, 'PAUSED');
        await this.stopConnectorAndTasks(name);
        await this.startConnector(name);
        return;
      }
      this.o.configs.putTargetState(name, 'PAUSED');
      await this.o.worker.setConnectorTargetState(name, 'PAUSED');
    });
  }

  resumeConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name);
      if (entry.targetState === 'RUNNING') return;
      const wasStopped = entry.targetState === 'STOPPED';
      this.o.configs.putTargetState(name, 'RUNNING');
      if (wasStopped || !this.o.worker.hasConnector(name)) {
        await this.stopConnectorAndTasks(name);
        await this.startConnector(name);
        return;
      }
      await this.o.worker.setConnectorTargetState(name, 'RUNNING');
      // A connector that was paused before its first task configs were generated.
      if (entry.taskConfigs.length === 0) await this.reconfigure(name);
    });
  }

  stopConnector(name: string): Promise<void> {
    return this.serial.run(async () => {
      const entry = this.entry(name);
      if (entry.targetState === 'STOPPED') return;
      this.o.configs.putTargetState(name, 'STOPPED');
      await this.o.worker.stopTasks(this.o.worker.taskIds(name));
      this.o.status.trimTasks(name, 0);
      this.o.configs.putTaskConfigs(name, []);
      await this.o.worker.setConnectorTargetState(name, 'STOPPED');
    });
  }

  async connectorActiveTopics(name: string): Promise<ActiveTopicsInfo> {
    this.entry(name);
    return { topics: [...(this.activeTopics.get(name) ?? [])].sort() };
  }

  async resetConnectorActiveTopics(name: string): Promise<void> {
    this.entry(name);
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
    };
  }

  async validateConnectorConfig(config: ConnectorConfigMap): Promise<ConfigInfos> {
    return validateConnectorConfig(this.o.plugins, config);
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

  /** Start a stored connector and its tasks per its target state. */
  private async startConnector(name: string): Promise<void> {
    if (this.stopped) return;
    const entry = this.entry(name);
    const ok = await this.o.worker.startConnector(name, entry.config, entry.targetState, () =>
      this.requestReconfiguration(name),
    );
    if (entry.targetState === 'STOPPED') {
      this.o.configs.putTaskConfigs(name, []);
      this.o.status.trimTasks(name, 0);
      return;
    }
    if (ok && entry.targetState === 'RUNNING') {
      const configs = await this.generateTaskConfigs(name);
      if (configs !== undefined) {
        this.o.configs.putTaskConfigs(name, configs);
        this.o.status.trimTasks(name, configs.length);
      }
    }
    await this.startTasks(name);
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

  private async startTasks(name: string): Promise<void> {
    const entry = this.entry(name);
    for (const [task, config] of entry.taskConfigs.entries()) {
      const id: ConnectorTaskId = { connector: name, task };
      await this.o.worker.startTask(id, entry.config, config, entry.targetState);
    }
  }

  private async stopConnectorAndTasks(name: string): Promise<void> {
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
    await this.startTasks(name);
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
