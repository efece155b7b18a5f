/**
 * Where connector configs, task configs and target states live (Kafka Connect's
 * ConfigBackingStore): the config topic in distributed mode
 * (kafka-config-backing-store.ts); standalone mode keeps them in memory.
 *
 * Contract:
 *   - Writes resolve once the broker has acknowledged them (acks=all) and this
 *     store has read them back, so `snapshot()` afterwards includes them.
 *   - Task configs of a connector become visible all at once, when the commit that
 *     follows them is read; a set cut short by a crash is never used.
 *   - Listeners are called from the store's read loop, in log order, synchronously;
 *     they must be quick and must not throw (the herder queues work for its own
 *     loop). Every worker sees every change, its own included.
 */
import type {
  ConnectorConfigMap,
  ConnectorTaskId,
  RestartRequest,
  TargetState,
} from '../herder/herder.ts';

/** An immutable view of the config topic up to `offset` (Connect's ClusterConfigState). */
export interface ClusterConfigState {
  /** Offset of the next record to read (-1: nothing read yet), sent in group metadata. */
  readonly offset: number;
  readonly connectorConfigs: ReadonlyMap<string, ConnectorConfigMap>;
  readonly targetStates: ReadonlyMap<string, TargetState>;
  /** Committed task count per connector. */
  readonly taskCounts: ReadonlyMap<string, number>;
  /** Committed task configs per connector, index = task number. */
  readonly taskConfigs: ReadonlyMap<string, readonly ConnectorConfigMap[]>;
  /** Connectors whose last commit did not match the task configs before it: no tasks run. */
  readonly inconsistent: ReadonlySet<string>;
  /**
   * Exactly-once sources (KIP-618): the task count of each connector's latest
   * `tasks-fencing-<name>` record, the task count its last zombie fencing recorded.
   */
  readonly taskCountRecords: ReadonlyMap<string, number>;
  /** Per connector, how many task config sets were committed (0 for the first). */
  readonly taskConfigGenerations: ReadonlyMap<string, number>;
  /** Connectors whose task configs were committed after their latest task count record. */
  readonly pendingFencing: ReadonlySet<string>;
}

export interface ConfigUpdateListener {
  onConnectorConfigUpdate(connector: string): void;
  onConnectorConfigRemove(connector: string): void;
  onTaskConfigUpdate(tasks: ConnectorTaskId[]): void;
  onConnectorTargetStateChange(connector: string): void;
  /** A restart asked on some worker; only requests written after this store started. */
  onRestartRequest?(request: RestartRequest): void;
  /** A cluster-scoped logger level (PUT /admin/loggers/{name}?scope=cluster, KIP-976). */
  onLoggingLevelUpdate?(namespace: string, level: string): void;
}

export interface ConfigBackingStore {
  start(): Promise<void>;
  stop(): Promise<void>;
  snapshot(): ClusterConfigState;
  /** Reads the topic to its current end (what the leader does before assigning). */
  readToEnd(): Promise<void>;
  /** `targetState` is written first, so a new connector starts in it. */
  putConnectorConfig(
    connector: string,
    config: ConnectorConfigMap,
    targetState?: TargetState,
  ): Promise<void>;
  removeConnectorConfig(connector: string): Promise<void>;
  putTaskConfigs(connector: string, configs: readonly ConnectorConfigMap[]): Promise<void>;
  putTargetState(connector: string, state: TargetState): Promise<void>;
  /**
   * Records that the producers of the connector's earlier task generations are fenced
   * and `taskCount` tasks now run (Kafka Connect's `tasks-fencing-<name>` record).
   */
  putTaskCountRecord(connector: string, taskCount: number): Promise<void>;
  /** Asks every worker to restart what it runs of the connector (as `request` says). */
  putRestartRequest(request: RestartRequest): Promise<void>;
  /**
   * Sets a logger level on every worker, those that join later included: a
   * `logger-cluster-<namespace>` record, as Kafka Connect writes it (KIP-976).
   */
  putLoggerLevel?(namespace: string, level: string): Promise<void>;
  /** The latest cluster-scoped level of every namespace read so far. */
  loggerLevels?(): ReadonlyMap<string, string>;
  addListener(listener: ConfigUpdateListener): void;
}

/** Committed task counts, the assignor's view of the configured work. */
export function configuredWork(state: ClusterConfigState): Map<string, number> {
  const work = new Map<string, number>();
  for (const name of state.connectorConfigs.keys()) {
    work.set(name, state.inconsistent.has(name) ? 0 : (state.taskCounts.get(name) ?? 0));
  }
  return work;
}
