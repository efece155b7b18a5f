/**
 * A small in-memory Herder for the REST tests: a test double of the runtime (no broker,
 * no worker), keeping connectors, target states, task configs, statuses and offsets in
 * maps and following the Herder contract's errors with Kafka Connect's texts (herder.ts's
 * `notFound`, as the real herders use them; the standalone herder's where the two
 * differ). Configs are validated with the real config-validation.ts, so 400s carry real
 * per-field errors.
 *
 * `failNextWith(error)` makes the next herder call reject with that error, to drive the
 * REST layer's error mapping (rebalance, not leader, timeout).
 */
import {
  type ActiveTopicsInfo,
  type ConnectorConfigMap,
  type ConnectorInfo,
  type ConnectorOffset,
  type ConnectorOffsets,
  type ConnectorState,
  type ConnectorStateInfo,
  type ConnectorType,
  type Created,
  type Herder,
  HerderError,
  notFound,
  type OffsetsMessage,
  offsetsMessages,
  type RestartRequest,
  type TargetState,
  type TaskInfo,
  type TaskState,
} from '../../../../src/connect/herder/herder.ts';
import { ConfigProviders } from '../../../../src/connect/runtime/config-providers.ts';
import {
  type ConfigInfos,
  validateConnectorConfig,
  validationContext,
} from '../../../../src/connect/runtime/config-validation.ts';
import type { PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';

interface Entry {
  config: ConnectorConfigMap;
  type: ConnectorType;
  target: TargetState;
  state: ConnectorState;
  trace?: string;
  tasks: { config: ConnectorConfigMap; state: ConnectorState; trace?: string }[];
  offsets: ConnectorOffset[];
  topics: string[];
}

export const WORKER_ID = '127.0.0.1:8083';

export class InMemoryHerder implements Herder {
  private readonly entries = new Map<string, Entry>();
  private nextError: Error | undefined;
  readonly clusterLoggerLevels: { namespace: string; level: string }[] = [];

  constructor(
    private readonly registry: PluginRegistry,
    private readonly clusterId = 'test-cluster-id',
  ) {}

  failNextWith(error: Error): void {
    this.nextError = error;
  }

  /** Test hook: put a connector or task into a state (e.g. FAILED with a trace). */
  setState(name: string, task: number | 'connector', state: ConnectorState, trace?: string): void {
    const entry = this.get(name);
    if (task === 'connector') Object.assign(entry, { state, trace });
    else Object.assign(entry.tasks[task], { state, trace });
  }

  /** Test hook: the topics a connector has used. */
  setActiveTopics(name: string, topics: string[]): void {
    this.get(name).topics = topics;
  }

  /** Test hook: committed offsets. */
  setOffsets(name: string, offsets: ConnectorOffset[]): void {
    this.get(name).offsets = offsets;
  }

  private async call<T>(fn: () => T): Promise<T> {
    const error = this.nextError;
    this.nextError = undefined;
    if (error !== undefined) throw error;
    return fn();
  }

  private get(name: string, unknown: (name: string) => HerderError = notFound.connector): Entry {
    const entry = this.entries.get(name);
    if (entry === undefined) throw unknown(name);
    return entry;
  }

  private info(name: string): ConnectorInfo {
    const e = this.get(name);
    return {
      name,
      config: { ...e.config },
      tasks: e.tasks.map((_, task) => ({ connector: name, task })),
      type: e.type,
    };
  }

  /** What the real herders give a connector's validate hook: the other connectors. */
  private context(name: string | undefined) {
    return validationContext(
      name,
      [...this.entries].map(([other, e]) => [other, e.config] as const),
    );
  }

  private validated(name: string, config: ConnectorConfigMap): ConfigInfos {
    const infos = validateConnectorConfig(this.registry, config, this.context(name));
    if (infos.error_count > 0) {
      throw new HerderError('invalid-config', 'Connector configuration is invalid', {
        configInfos: infos,
      });
    }
    return infos;
  }

  private write(name: string, config: ConnectorConfigMap, initial?: TargetState): boolean {
    this.validated(name, config);
    const type =
      this.registry.findOfType(config['connector.class'], 'source', 'sink')?.type ?? 'unknown';
    const existing = this.entries.get(name);
    const target = existing?.target ?? initial ?? 'RUNNING';
    const entry: Entry = existing ?? {
      config,
      type,
      target,
      state: target,
      tasks: [],
      offsets: [],
      topics: [],
    };
    entry.config = config;
    entry.type = type;
    const taskState: ConnectorState = target === 'PAUSED' ? 'PAUSED' : 'RUNNING';
    entry.tasks =
      target === 'STOPPED'
        ? []
        : Array.from({ length: Number(config['tasks.max'] ?? '1') }, () => ({
            config: { ...config, 'task.class': type },
            state: taskState,
          }));
    this.entries.set(name, entry);
    return existing === undefined;
  }

  connectors(): Promise<string[]> {
    return this.call(() => [...this.entries.keys()]);
  }

  connectorInfo(name: string): Promise<ConnectorInfo> {
    return this.call(() => this.info(name));
  }

  connectorConfig(name: string): Promise<ConnectorConfigMap> {
    return this.call(() => ({ ...this.get(name).config }));
  }

  putConnectorConfig(
    name: string,
    config: ConnectorConfigMap,
    allowReplace: boolean,
    initialState?: TargetState,
  ): Promise<Created<ConnectorInfo>> {
    return this.call(() => {
      if (!allowReplace && this.entries.has(name)) {
        throw new HerderError('already-exists', `Connector ${name} already exists`);
      }
      const created = this.write(name, config, initialState);
      return { created, result: this.info(name) };
    });
  }

  patchConnectorConfig(
    name: string,
    patch: Record<string, string | null>,
  ): Promise<Created<ConnectorInfo>> {
    return this.call(() => {
      const merged: Record<string, string> = { ...this.get(name).config };
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      merged.name = name;
      this.write(name, merged);
      return { created: false, result: this.info(name) };
    });
  }

  deleteConnector(name: string): Promise<void> {
    return this.call(() => {
      this.get(name);
      this.entries.delete(name);
    });
  }

  connectorStatus(name: string): Promise<ConnectorStateInfo> {
    return this.call(() => {
      this.get(name, notFound.connectorStatus);
      return this.status(
        name,
        () => false,
        () => false,
      );
    });
  }

  private status(
    name: string,
    restartConnector: (e: Entry) => boolean,
    restartTask: (t: Entry['tasks'][number]) => boolean,
  ): ConnectorStateInfo {
    const e = this.get(name);
    return {
      name,
      connector: {
        state: restartConnector(e) ? 'RESTARTING' : e.state,
        worker_id: WORKER_ID,
        ...(e.trace !== undefined ? { trace: e.trace } : {}),
      },
      tasks: e.tasks.map((t, id) => ({
        id,
        state: restartTask(t) ? 'RESTARTING' : t.state,
        worker_id: WORKER_ID,
        ...(t.trace !== undefined ? { trace: t.trace } : {}),
      })),
      type: e.type,
    };
  }

  taskConfigs(name: string): Promise<TaskInfo[]> {
    return this.call(() =>
      this.get(name).tasks.map((t, task) => ({ id: { connector: name, task }, config: t.config })),
    );
  }

  taskStatus(connector: string, task: number): Promise<TaskState> {
    return this.call(() => {
      const t = this.entries.get(connector)?.tasks[task];
      if (t === undefined) throw notFound.taskStatus(connector, task);
      return {
        id: task,
        state: t.state,
        worker_id: WORKER_ID,
        ...(t.trace !== undefined ? { trace: t.trace } : {}),
      };
    });
  }

  restartConnector(name: string): Promise<void> {
    return this.call(() => {
      this.get(name);
    });
  }

  restartConnectorAndTasks(request: RestartRequest): Promise<ConnectorStateInfo> {
    return this.call(() => {
      this.get(request.connector, notFound.restart);
      return this.status(
        request.connector,
        (e) => !request.onlyFailed || e.state === 'FAILED',
        (t) => request.includeTasks && (!request.onlyFailed || t.state === 'FAILED'),
      );
    });
  }

  restartTask(connector: string, task: number): Promise<void> {
    return this.call(() => {
      if (this.get(connector).tasks[task] === undefined)
        throw notFound.standaloneTask(connector, task);
    });
  }

  private retarget(name: string, target: TargetState): void {
    const e = this.get(name, notFound.targetState);
    e.target = target;
    e.state = target;
    if (target === 'STOPPED') e.tasks = [];
    for (const t of e.tasks) t.state = target === 'PAUSED' ? 'PAUSED' : 'RUNNING';
  }

  pauseConnector(name: string): Promise<void> {
    return this.call(() => this.retarget(name, 'PAUSED'));
  }

  resumeConnector(name: string): Promise<void> {
    return this.call(() => {
      const wasStopped = this.get(name, notFound.targetState).target === 'STOPPED';
      this.retarget(name, 'RUNNING');
      if (wasStopped) this.write(name, this.get(name).config);
    });
  }

  fenceZombies(name: string): Promise<void> {
    return this.call(() => {
      this.get(name);
    });
  }

  stopConnector(name: string): Promise<void> {
    return this.call(() => this.retarget(name, 'STOPPED'));
  }

  connectorActiveTopics(name: string): Promise<ActiveTopicsInfo> {
    return this.call(() => ({ topics: [...(this.entries.get(name)?.topics ?? [])] }));
  }

  resetConnectorActiveTopics(name: string): Promise<void> {
    return this.call(() => {
      const entry = this.entries.get(name);
      if (entry !== undefined) entry.topics = [];
    });
  }

  connectorOffsets(name: string): Promise<ConnectorOffsets> {
    return this.call(() => ({ offsets: this.get(name).offsets }));
  }

  private checkStopped(name: string): Entry {
    const e = this.get(name);
    if (e.target !== 'STOPPED' || e.tasks.length !== 0) {
      throw new HerderError(
        'bad-request',
        `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`,
      );
    }
    return e;
  }

  alterConnectorOffsets(name: string, offsets: ConnectorOffset[]): Promise<OffsetsMessage> {
    return this.call(() => {
      const e = this.checkStopped(name);
      const key = (o: ConnectorOffset) => JSON.stringify(o.partition);
      const byPartition = new Map(e.offsets.map((o) => [key(o), o]));
      for (const o of offsets) {
        if (o.offset === null) byPartition.delete(key(o));
        else byPartition.set(key(o), o);
      }
      e.offsets = [...byPartition.values()];
      return { message: offsetsMessages.altered };
    });
  }

  resetConnectorOffsets(name: string): Promise<OffsetsMessage> {
    return this.call(() => {
      this.checkStopped(name).offsets = [];
      return { message: offsetsMessages.reset };
    });
  }

  validateConnectorConfig(config: ConnectorConfigMap): Promise<ConfigInfos> {
    return this.call(() =>
      validateConnectorConfig(this.registry, config, this.context(config.name)),
    );
  }

  /** What healthCheck answers; a test replaces it with a promise that never settles. */
  health: () => Promise<void> = () => Promise.resolve();
  ready = true;

  healthCheck(): Promise<void> {
    return this.health();
  }

  isReady(): boolean {
    return this.ready;
  }

  configProviders(): ConfigProviders {
    return ConfigProviders.none;
  }

  plugins(): PluginRegistry {
    return this.registry;
  }

  kafkaClusterId(): Promise<string> {
    return this.call(() => this.clusterId);
  }

  setClusterLoggerLevel(namespace: string, level: string): Promise<void> {
    return this.call(() => {
      this.clusterLoggerLevels.push({ namespace, level });
    });
  }
}
