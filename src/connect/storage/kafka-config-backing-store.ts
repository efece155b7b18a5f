/**
 * Connector configs, task configs and target states in the config topic
 * (config.storage.topic, one partition so every record is totally ordered), in
 * Kafka Connect's layout: string keys, values as its JsonConverter writes them with
 * schemas disabled, so Java workers and tools read this topic and we read theirs.
 *
 *   connector-<name>      {"properties": {...}}            null: connector deleted
 *   target-state-<name>   {"state": "STARTED"|"PAUSED", "state.v2": "STARTED"|"PAUSED"|"STOPPED"}
 *                         (`state` falls back to PAUSED for STOPPED, for workers before 3.5)
 *   task-<name>-<n>       {"properties": {...}}
 *   commit-<name>         {"tasks": N}
 *   restart-connector-<name>  {"include-tasks": bool, "only-failed": bool}
 *   tasks-fencing-<name>  {"task-count": N}  (exactly-once sources: the task count the
 *                         last zombie fencing recorded; task configs committed after it
 *                         leave the connector pending fencing)
 *
 * Invariants:
 *   - Task configs are staged as they are read and applied only when the commit
 *     record that follows them is read; the commit replaces the connector's whole
 *     task set. If the staged set lacks any of tasks 0..N-1, the connector
 *     is "inconsistent" and runs no tasks until a good commit arrives (a writer that
 *     crashed between its task records and its commit leaves nothing half-applied).
 *   - A connector without a target-state record is STARTED (RUNNING). Target states
 *     are written before a new connector's config, so it starts in the asked state.
 *   - Deleting a connector writes tombstones for its config and target state; its
 *     task configs and counts are dropped when the config tombstone is read.
 *   - Restart requests are passed to listeners only once the store has caught up
 *     at start: a restart asked before this worker started is history, not news.
 *   - Records with other keys (session-key) are skipped: this store does not act on them.
 *
 * After a crash nothing needs repair: the state is rebuilt by reading the topic
 * from the beginning. Who calls it: the distributed herder (writes only as leader,
 * as Connect does); the read loop calls the listeners.
 */
import type { Producer } from 'kafkajs';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Logger } from '../../util/logger.ts';
import type {
  ConnectorConfigMap,
  ConnectorTaskId,
  RestartRequest,
  TargetState,
} from '../herder/herder.ts';
import type {
  ClusterConfigState,
  ConfigBackingStore,
  ConfigUpdateListener,
} from './config-backing-store.ts';
import { startInternalLog } from './internal-topic.ts';
import type { KafkaBasedLog, LogRecord } from './kafka-based-log.ts';

export interface KafkaConfigStoreOptions {
  client: ClusterClient;
  /** Idempotent, acks=all producer (the caller owns its lifecycle). */
  producer: Producer;
  topic: string;
  replicationFactor: number;
  logger: Logger;
  /**
   * Long-poll wait of the tailing fetch (KafkaBasedLog's default when unset). A
   * broker answers one connection's requests in order, so readToEnd() can wait up
   * to this long behind the poll in flight: smaller means faster writes, more
   * idle fetches.
   */
  readMaxWaitMs?: number;
}

export const connectorConfigKey = (name: string) => `connector-${name}`;
export const targetStateKey = (name: string) => `target-state-${name}`;
export const taskConfigKey = (id: ConnectorTaskId) => `task-${id.connector}-${id.task}`;
export const commitKey = (name: string) => `commit-${name}`;
export const restartKey = (name: string) => `restart-connector-${name}`;
const TASK_COUNT_PREFIX = 'tasks-fencing-';
export const taskCountKey = (name: string) => `${TASK_COUNT_PREFIX}${name}`;

/** Connect's TargetState names on the wire; RUNNING is STARTED there. */
function toWire(state: TargetState): string {
  return state === 'RUNNING' ? 'STARTED' : state;
}
function fromWire(value: unknown): TargetState | undefined {
  if (value === 'STARTED') return 'RUNNING';
  if (value === 'PAUSED' || value === 'STOPPED') return value;
  return undefined;
}

/** Kafka Connect's key of a cluster-scoped logger level (KafkaConfigBackingStore). */
const LOGGER_CLUSTER_PREFIX = 'logger-cluster-';

export class KafkaConfigBackingStore implements ConfigBackingStore {
  private offset = -1;
  private readonly connectorConfigs = new Map<string, ConnectorConfigMap>();
  private readonly targetStates = new Map<string, TargetState>();
  private readonly taskCounts = new Map<string, number>();
  private readonly taskConfigs = new Map<string, ConnectorConfigMap[]>();
  private readonly inconsistent = new Set<string>();
  private readonly taskCountRecords = new Map<string, number>();
  private readonly taskConfigGenerations = new Map<string, number>();
  private readonly pendingFencing = new Set<string>();
  /** Task configs read but not yet committed. */
  private readonly staged = new Map<string, Map<number, ConnectorConfigMap>>();
  private readonly listeners: ConfigUpdateListener[] = [];
  private readonly clusterLoggerLevels = new Map<string, string>();
  private log: KafkaBasedLog | undefined;
  private started = false;

  constructor(private readonly options: KafkaConfigStoreOptions) {}

  addListener(listener: ConfigUpdateListener): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    this.log = await startInternalLog(
      this.options.client,
      {
        topic: this.options.topic,
        configKey: 'config.storage.topic',
        partitions: 1,
        replicationFactor: this.options.replicationFactor,
        exactlyOnePartition: true,
      },
      {
        logger: this.options.logger,
        maxWaitMs: this.options.readMaxWaitMs,
        onRecord: (r) => this.apply(r),
      },
    );
    this.started = true;
  }

  async stop(): Promise<void> {
    await this.log?.stop();
  }

  async readToEnd(): Promise<void> {
    await this.requireLog().readToEnd();
  }

  snapshot(): ClusterConfigState {
    return {
      offset: this.offset,
      connectorConfigs: new Map([...this.connectorConfigs].map(([k, v]) => [k, { ...v }])),
      targetStates: new Map(this.targetStates),
      taskCounts: new Map(this.taskCounts),
      taskConfigs: new Map([...this.taskConfigs].map(([k, v]) => [k, v.map((c) => ({ ...c }))])),
      inconsistent: new Set(this.inconsistent),
      taskCountRecords: new Map(this.taskCountRecords),
      taskConfigGenerations: new Map(this.taskConfigGenerations),
      pendingFencing: new Set(this.pendingFencing),
    };
  }

  async putConnectorConfig(
    connector: string,
    config: ConnectorConfigMap,
    targetState?: TargetState,
  ): Promise<void> {
    const messages: Array<{ key: string; value: string | null }> = [];
    if (targetState !== undefined) {
      messages.push({ key: targetStateKey(connector), value: targetStateValue(targetState) });
    }
    messages.push({
      key: connectorConfigKey(connector),
      value: JSON.stringify({ properties: config }),
    });
    await this.write(messages);
  }

  async removeConnectorConfig(connector: string): Promise<void> {
    await this.write([
      { key: connectorConfigKey(connector), value: null },
      { key: targetStateKey(connector), value: null },
    ]);
  }

  async putTaskConfigs(connector: string, configs: readonly ConnectorConfigMap[]): Promise<void> {
    const messages = configs.map((properties, task) => ({
      key: taskConfigKey({ connector, task }),
      value: JSON.stringify({ properties }),
    }));
    messages.push({ key: commitKey(connector), value: JSON.stringify({ tasks: configs.length }) });
    await this.write(messages);
  }

  async putTargetState(connector: string, state: TargetState): Promise<void> {
    await this.write([{ key: targetStateKey(connector), value: targetStateValue(state) }]);
  }

  async putTaskCountRecord(connector: string, taskCount: number): Promise<void> {
    await this.write([
      { key: taskCountKey(connector), value: JSON.stringify({ 'task-count': taskCount }) },
    ]);
  }

  async putRestartRequest(request: RestartRequest): Promise<void> {
    await this.write([
      {
        key: restartKey(request.connector),
        value: JSON.stringify({
          'include-tasks': request.includeTasks,
          'only-failed': request.onlyFailed,
        }),
      },
    ]);
  }

  async putLoggerLevel(namespace: string, level: string): Promise<void> {
    await this.write([
      { key: `${LOGGER_CLUSTER_PREFIX}${namespace}`, value: JSON.stringify({ level }) },
    ]);
  }

  loggerLevels(): ReadonlyMap<string, string> {
    return new Map(this.clusterLoggerLevels);
  }

  /** One produce request (one partition, one batch: applied in order), then read back. */
  private async write(messages: Array<{ key: string; value: string | null }>): Promise<void> {
    await this.options.producer.send({ topic: this.options.topic, acks: -1, messages });
    await this.readToEnd();
  }

  private requireLog(): KafkaBasedLog {
    if (!this.log) throw new Error('config store is not started');
    return this.log;
  }

  private apply(record: LogRecord): void {
    this.offset = record.offset + 1;
    if (record.key === null) return;
    const key = record.key.toString('utf8');
    let value: Record<string, unknown> | null = null;
    if (record.value !== null) {
      try {
        const parsed: unknown = JSON.parse(record.value.toString('utf8'));
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          throw new Error('not an object');
        value = parsed as Record<string, unknown>;
      } catch (err) {
        this.options.logger.error(
          { key, offset: record.offset, err: String(err) },
          'skipping unreadable config record',
        );
        return;
      }
    }
    if (key.startsWith('connector-')) this.applyConnector(key.slice('connector-'.length), value);
    else if (key.startsWith('target-state-'))
      this.applyTargetState(key.slice('target-state-'.length), value);
    else if (key.startsWith('task-'))
      this.stageTask(key.slice('task-'.length), value, record.offset);
    else if (key.startsWith('restart-connector-'))
      this.applyRestart(key.slice('restart-connector-'.length), value);
    else if (key.startsWith('commit-'))
      this.applyCommit(key.slice('commit-'.length), value, record.offset);
    else if (key.startsWith(TASK_COUNT_PREFIX))
      this.applyTaskCount(key.slice(TASK_COUNT_PREFIX.length), value, record.offset);
    else if (key.startsWith(LOGGER_CLUSTER_PREFIX))
      this.applyLoggerLevel(key.slice(LOGGER_CLUSTER_PREFIX.length), value);
    else this.options.logger.debug({ key }, 'ignoring config record this runtime does not use');
  }

  private applyConnector(name: string, value: Record<string, unknown> | null): void {
    if (value === null) {
      const existed = this.connectorConfigs.delete(name);
      this.targetStates.delete(name);
      this.taskCounts.delete(name);
      this.taskConfigs.delete(name);
      this.staged.delete(name);
      this.inconsistent.delete(name);
      this.taskCountRecords.delete(name);
      this.taskConfigGenerations.delete(name);
      this.pendingFencing.delete(name);
      if (existed) this.notify((l) => l.onConnectorConfigRemove(name));
      return;
    }
    const properties = stringMap(value.properties);
    if (properties === undefined) {
      this.options.logger.error(
        { connector: name },
        'connector config record without properties; skipped',
      );
      return;
    }
    this.connectorConfigs.set(name, properties);
    if (!this.targetStates.has(name)) this.targetStates.set(name, 'RUNNING');
    this.notify((l) => l.onConnectorConfigUpdate(name));
  }

  private applyTargetState(name: string, value: Record<string, unknown> | null): void {
    if (value === null) {
      this.targetStates.delete(name);
      return;
    }
    const state = fromWire(value['state.v2']) ?? fromWire(value.state);
    if (state === undefined) {
      this.options.logger.error({ connector: name, value }, 'unknown target state; skipped');
      return;
    }
    this.targetStates.set(name, state);
    if (this.connectorConfigs.has(name)) this.notify((l) => l.onConnectorTargetStateChange(name));
  }

  private stageTask(rest: string, value: Record<string, unknown> | null, offset: number): void {
    const dash = rest.lastIndexOf('-');
    const task = Number(rest.slice(dash + 1));
    const properties = value === null ? undefined : stringMap(value.properties);
    if (dash <= 0 || !Number.isInteger(task) || task < 0 || properties === undefined) {
      this.options.logger.error(
        { key: `task-${rest}`, offset },
        'malformed task config record; skipped',
      );
      return;
    }
    const connector = rest.slice(0, dash);
    let staged = this.staged.get(connector);
    if (!staged) {
      staged = new Map();
      this.staged.set(connector, staged);
    }
    staged.set(task, properties);
  }

  private applyCommit(
    connector: string,
    value: Record<string, unknown> | null,
    offset: number,
  ): void {
    const count = value?.tasks;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
      this.options.logger.error({ connector, offset }, 'malformed task commit record; skipped');
      return;
    }
    const staged = this.staged.get(connector) ?? new Map<number, ConnectorConfigMap>();
    this.staged.delete(connector);
    // As Kafka Connect: task configs after the latest task count record need a round
    // of zombie fencing before exactly-once tasks may run them, consistent or not.
    this.pendingFencing.add(connector);
    // Only tasks 0..N-1 must be present: after compaction, task records of an older,
    // larger set may still precede this commit, and are ignored (as in Connect).
    let complete = true;
    for (let t = 0; t < count; t++) if (!staged.has(t)) complete = false;
    if (!complete) {
      this.options.logger.error(
        { connector, committed: count, staged: [...staged.keys()] },
        'task commit does not match the task configs before it; the connector runs no tasks until it is reconfigured',
      );
      this.inconsistent.add(connector);
      return;
    }
    this.inconsistent.delete(connector);
    this.taskConfigGenerations.set(
      connector,
      (this.taskConfigGenerations.get(connector) ?? -1) + 1,
    );
    this.taskConfigs.set(
      connector,
      Array.from({ length: count }, (_, t) => staged.get(t)!),
    );
    this.taskCounts.set(connector, count);
    const ids = Array.from({ length: count }, (_, task) => ({ connector, task }));
    this.notify((l) => l.onTaskConfigUpdate(ids));
  }

  private applyTaskCount(
    connector: string,
    value: Record<string, unknown> | null,
    offset: number,
  ): void {
    const count = value?.['task-count'];
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
      this.options.logger.error({ connector, offset }, 'malformed task count record; skipped');
      return;
    }
    this.taskCountRecords.set(connector, count);
    this.pendingFencing.delete(connector);
  }

  private applyRestart(connector: string, value: Record<string, unknown> | null): void {
    if (value === null || !this.started) return;
    const request: RestartRequest = {
      connector,
      includeTasks: value['include-tasks'] === true,
      onlyFailed: value['only-failed'] === true,
    };
    this.notify((l) => l.onRestartRequest?.(request));
  }

  private applyLoggerLevel(namespace: string, value: Record<string, unknown> | null): void {
    const level = value?.level;
    if (typeof level !== 'string') {
      this.clusterLoggerLevels.delete(namespace);
      return;
    }
    this.clusterLoggerLevels.set(namespace, level);
    this.notify((l) => l.onLoggingLevelUpdate?.(namespace, level));
  }

  private notify(call: (l: ConfigUpdateListener) => void): void {
    for (const l of this.listeners) {
      try {
        call(l);
      } catch (err) {
        this.options.logger.error({ err }, 'config listener threw');
      }
    }
  }
}

function targetStateValue(state: TargetState): string {
  // Workers before 3.5 know no STOPPED; for them it reads as PAUSED.
  const legacy = state === 'STOPPED' ? 'PAUSED' : toWire(state);
  return JSON.stringify({ state: legacy, 'state.v2': toWire(state) });
}

/** Connect stores config values as strings; anything else is coerced (null stays out). */
function stringMap(value: unknown): ConnectorConfigMap | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: ConnectorConfigMap = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : String(v);
  }
  return out;
}
