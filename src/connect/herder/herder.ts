/**
 * The Herder: what the REST API (and the standalone CLI) asks of the runtime. A herder
 * owns the cluster's view of connectors (configs, target states, task configs, status)
 * and decides where they run; the standalone and distributed herders implement this
 * interface, the REST layer in src/connect/rest talks to nothing else.
 *
 * Contract shared by every method:
 *   - Every method is asynchronous and settles exactly once. Failures reject with a
 *     HerderError (below), never with a bare Error for an expected condition: the REST
 *     layer maps the error's `kind` to Kafka Connect's status code and error body.
 *   - A herder that is not the leader rejects writes with kind `not-leader` carrying the
 *     leader's REST URL (or none while a rebalance is underway); the REST layer then
 *     forwards the request there, as Kafka Connect's `forward=true` logic does.
 *   - Connector configs cross this boundary as Kafka Connect stores them: string keys
 *     and string values.
 *   - Methods may be called concurrently from different REST requests; the herder
 *     serialises what needs it (the distributed herder runs requests on its own loop).
 */

import type { ConfigProviders } from '../runtime/config-providers.ts';
import type { ConfigInfos } from '../runtime/config-validation.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';

/** Connector and task states as Kafka Connect reports them. */
export type ConnectorState =
  | 'UNASSIGNED'
  | 'RUNNING'
  | 'PAUSED'
  | 'STOPPED'
  | 'FAILED'
  | 'RESTARTING';

/** The state the user asked for; the runtime drives connectors towards it. */
export type TargetState = 'RUNNING' | 'PAUSED' | 'STOPPED';

/** `source`, `sink`, or `unknown` when the connector's class cannot be loaded. */
export type ConnectorType = 'source' | 'sink' | 'unknown';

export type ConnectorConfigMap = Record<string, string>;

/** A task's identity, as in ConnectorInfo.tasks and TaskInfo.id. */
export interface ConnectorTaskId {
  connector: string;
  task: number;
}

/** Body of GET /connectors/{name} and of a create/update answer. */
export interface ConnectorInfo {
  name: string;
  config: ConnectorConfigMap;
  tasks: ConnectorTaskId[];
  type: ConnectorType;
}

/** One element of GET /connectors/{name}/tasks. */
export interface TaskInfo {
  id: ConnectorTaskId;
  config: ConnectorConfigMap;
}

/**
 * A connector's or task's state. `trace`: the error of a FAILED one, or what holds up a
 * RUNNING task (SourceTaskContext.reportTrouble); absent otherwise.
 */
export interface ConnectorStateEntry {
  state: ConnectorState;
  worker_id: string;
  trace?: string;
}

/** A task's state, the body of GET /connectors/{name}/tasks/{id}/status. */
export interface TaskState extends ConnectorStateEntry {
  id: number;
}

/** Body of GET /connectors/{name}/status (and of a restart with includeTasks/onlyFailed). */
export interface ConnectorStateInfo {
  name: string;
  connector: ConnectorStateEntry;
  tasks: TaskState[];
  type: ConnectorType;
}

/** Value of GET /connectors/{name}/topics: `{ "<name>": { "topics": [...] } }`. */
export interface ActiveTopicsInfo {
  topics: string[];
}

/**
 * One offset as GET|PATCH /connectors/{name}/offsets carries it. Source connectors:
 * the connector's own source partition and offset maps. Sink connectors:
 * `{partition: {kafka_topic, kafka_partition}, offset: {kafka_offset}}`. A null
 * offset in a PATCH resets that partition.
 */
export interface ConnectorOffset {
  partition: Record<string, unknown>;
  offset: Record<string, unknown> | null;
}

export interface ConnectorOffsets {
  offsets: ConnectorOffset[];
}

/** Body of a successful PATCH|DELETE /offsets. */
export interface OffsetsMessage {
  message: string;
}

/** Kafka Connect's messages for successful offset changes, for herders to answer with. */
export const offsetsMessages = {
  altered: 'The offsets for this connector have been altered successfully',
  reset: 'The offsets for this connector have been reset successfully',
  alteredFrameworkOnly:
    'The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses.',
  resetFrameworkOnly:
    'The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.',
} as const;

/** What to restart: Kafka Connect's RestartRequest. */
export interface RestartRequest {
  connector: string;
  /** Restart only instances whose state is FAILED (or UNASSIGNED tasks). */
  onlyFailed: boolean;
  /** Restart the connector's tasks too, not only the connector instance. */
  includeTasks: boolean;
}

/** Result of a create or update: `created` tells 201 from 200. */
export interface Created<T> {
  created: boolean;
  result: T;
}

// ---- errors ---------------------------------------------------------------------------

/**
 * What went wrong, as a value. The REST layer maps each kind to Kafka Connect's answer:
 *   not-found         404  (connector, task or plugin unknown)
 *   already-exists    409  (POST /connectors for an existing name)
 *   bad-request       400  (e.g. offsets changed while the connector is not STOPPED)
 *   invalid-config    400  "Connector configuration is invalid and contains ..." with
 *                          the per-field results in `configInfos`
 *   not-leader        forwarded to `leaderUrl`; 409 when there is none or forwarding is
 *                          not allowed (second hop)
 *   rebalance-needed  409  (the request raced a config change or rebalance)
 *   conflict          409  any other conflicting operation, with its own message
 *   timeout           500  "Request timed out"
 */
export type HerderErrorKind =
  | 'not-found'
  | 'already-exists'
  | 'bad-request'
  | 'invalid-config'
  | 'not-leader'
  | 'rebalance-needed'
  | 'conflict'
  | 'timeout';

export class HerderError extends Error {
  readonly kind: HerderErrorKind;
  /** For `not-leader`: the leader's REST base URL, undefined while no leader is known. */
  readonly leaderUrl?: string;
  /** For `invalid-config`: the validation result whose errors refused the config. */
  readonly configInfos?: ConfigInfos;

  constructor(
    kind: HerderErrorKind,
    message: string,
    details: { leaderUrl?: string; configInfos?: ConfigInfos; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = 'HerderError';
    this.kind = kind;
    this.leaderUrl = details.leaderUrl;
    this.configInfos = details.configInfos;
  }
}

/** True for a HerderError of any kind, across module copies (checked by shape). */
export function isHerderError(error: unknown): error is HerderError {
  return (
    error instanceof HerderError ||
    (error instanceof Error &&
      error.name === 'HerderError' &&
      typeof (error as HerderError).kind === 'string')
  );
}

/** An unknown connector, as most requests of Kafka Connect's herders word it. */
export function connectorNotFound(name: string): HerderError {
  return new HerderError('not-found', `Connector ${name} not found`);
}

/**
 * Kafka Connect's herders word "unknown connector" (or task) differently per request,
 * and its standalone and distributed herders differ on some restarts; scripts and
 * clients match on these texts, so each request answers with Kafka's (both 404):
 *   connector           "Connector x not found"   info, config, tasks, PUT/PATCH config,
 *                                                delete, offsets; the standalone herder's
 *                                                restart and task restart
 *   connectorStatus     "No status found for connector x"   AbstractHerder.connectorStatus
 *   taskStatus          "No status found for task x-0"      AbstractHerder.taskStatus
 *   targetState         "Unknown connector x"     pause, resume (AbstractHerder), stop
 *                                                (DistributedHerder)
 *   restart             "Unknown connector: x"    restart with includeTasks/onlyFailed (both
 *                                                herders); the distributed herder's restart
 *                                                and task restart
 *   distributedTask     "Unknown task: x-0"       DistributedHerder.restartTask
 *   standaloneTask      "Task x-0 not found"      StandaloneHerder.restartTask
 * Kafka answers active topics (GET /topics, PUT /topics/reset) of an unknown connector
 * with none, not 404: herders do the same.
 */
export const notFound = {
  connector: connectorNotFound,
  connectorStatus: (name: string) =>
    new HerderError('not-found', `No status found for connector ${name}`),
  taskStatus: (connector: string, task: number) =>
    new HerderError('not-found', `No status found for task ${connector}-${task}`),
  targetState: (name: string) => new HerderError('not-found', `Unknown connector ${name}`),
  restart: (name: string) => new HerderError('not-found', `Unknown connector: ${name}`),
  distributedTask: (connector: string, task: number) =>
    new HerderError('not-found', `Unknown task: ${connector}-${task}`),
  standaloneTask: (connector: string, task: number) =>
    new HerderError('not-found', `Task ${connector}-${task} not found`),
} as const;

// ---- the interface --------------------------------------------------------------------

export interface Herder {
  /** Names of every connector in the cluster, in no particular order. */
  connectors(): Promise<string[]>;

  /** Name, config, task ids and type of one connector; not-found if unknown. */
  connectorInfo(name: string): Promise<ConnectorInfo>;

  /** The connector's config as last written (string values); not-found if unknown. */
  connectorConfig(name: string): Promise<ConnectorConfigMap>;

  /**
   * Create or replace a connector's config after validating it (invalid-config with the
   * per-field results when it does not validate). Existing connector with
   * `allowReplace` false: already-exists. `initialState` applies only on creation.
   */
  putConnectorConfig(
    name: string,
    config: ConnectorConfigMap,
    allowReplace: boolean,
    initialState?: TargetState,
  ): Promise<Created<ConnectorInfo>>;

  /**
   * Merge `patch` into the existing config (a null value removes the key), validate and
   * write it; not-found if unknown. Never creates.
   */
  patchConnectorConfig(
    name: string,
    patch: Record<string, string | null>,
  ): Promise<Created<ConnectorInfo>>;

  /** Remove the connector, its task configs and target state; not-found if unknown. */
  deleteConnector(name: string): Promise<void>;

  /** Connector and task states with the worker running each; not-found if unknown. */
  connectorStatus(name: string): Promise<ConnectorStateInfo>;

  /** Task configs as generated by the connector; not-found if unknown. */
  taskConfigs(name: string): Promise<TaskInfo[]>;

  /** One task's state; not-found if the connector or task is unknown. */
  taskStatus(connector: string, task: number): Promise<TaskState>;

  /** Restart the connector instance only (the plain POST /restart). */
  restartConnector(name: string): Promise<void>;

  /**
   * Restart per `request` and answer the states right after the restart was planned
   * (restarted instances show RESTARTING); not-found if unknown.
   */
  restartConnectorAndTasks(request: RestartRequest): Promise<ConnectorStateInfo>;

  /** Restart one task; not-found if the connector or task is unknown. */
  restartTask(connector: string, task: number): Promise<void>;

  /** Set the target state to PAUSED (idempotent); not-found if unknown. */
  pauseConnector(name: string): Promise<void>;

  /** Set the target state to RUNNING (idempotent); not-found if unknown. */
  resumeConnector(name: string): Promise<void>;

  /** Set the target state to STOPPED, shutting down its tasks (idempotent); not-found if unknown. */
  stopConnector(name: string): Promise<void>;
  /**
   * Zombie fencing of an exactly-once source connector's earlier task generations
   * (Kafka's internal `PUT /connectors/{name}/fence`; leader only, forwarded there).
   */
  fenceZombies(name: string): Promise<void>;

  /** Topics the connector has used since creation or the last reset; none if unknown. */
  connectorActiveTopics(name: string): Promise<ActiveTopicsInfo>;

  /** Forget the connector's active topics; nothing to do if unknown. */
  resetConnectorActiveTopics(name: string): Promise<void>;

  /** The connector's committed offsets (source or sink shape); not-found if unknown. */
  connectorOffsets(name: string): Promise<ConnectorOffsets>;

  /**
   * Write the given offsets (null offset = reset that partition). Only while STOPPED
   * with no tasks, else bad-request with Kafka Connect's "must be in the STOPPED state"
   * text; not-found if unknown. Answers one of `offsetsMessages`.
   */
  alterConnectorOffsets(name: string, offsets: ConnectorOffset[]): Promise<OffsetsMessage>;

  /** Remove every offset of the connector; same preconditions as alter. */
  resetConnectorOffsets(name: string): Promise<OffsetsMessage>;

  /**
   * Validate a connector config (common keys, the plugin's, its converters' and
   * transforms', and the connector's own cross-field check) without storing it.
   * Unknown or missing connector.class: bad-request.
   */
  validateConnectorConfig(config: ConnectorConfigMap): Promise<ConfigInfos>;

  /** The plugins this worker loaded, for /connector-plugins. */
  plugins(): PluginRegistry;
  /** What resolves `${provider:path:key}` references in connector configs. */
  configProviders(): ConfigProviders;

  /** The Kafka cluster id the worker is connected to, for GET /. */
  kafkaClusterId(): Promise<string>;
  /**
   * Resolves once a no-op has gone through the herder's request loop (GET /health):
   * a loop held up by a stuck call leaves it pending.
   */
  healthCheck(): Promise<void>;
  /** Whether the herder has finished starting (distributed: joined its group once). */
  isReady(): boolean;

  /**
   * Set a logger level on every worker of the cluster (PUT /admin/loggers/{name}
   * ?scope=cluster). A standalone herder applies it locally.
   */
  setClusterLoggerLevel(namespace: string, level: string): Promise<void>;
}
