/**
 * DistributedHerder: the Herder of `connect worker`, one member of a cluster of
 * workers sharing group.id (Kafka Connect's DistributedHerder, split by concept):
 *
 *   this file            REST requests: reads served locally after reading the config
 *                        topic to its end; writes only on the leader
 *   rebalance-handler.ts the group member's callbacks (assign, revoke, membership lost)
 *   config-updates.ts    config topic records -> work on this worker, leader rebalances
 *   assigned-work.ts     what this worker runs, through the Worker
 *   status-reporter.ts   the Worker's states -> the status topic, with generations
 *   connector-offsets.ts offsets get/alter/reset
 *
 * Threading model: one serial loop (a SerialExecutor) runs every request that touches
 * configs or running work, every rebalance callback and every config event, one at a
 * time. The group member has its own loop and only calls in (rebalance-handler.ts);
 * nothing on the serial loop waits for the member, so they cannot deadlock. Nor does
 * it wait for a plugin's start (assigned-work.ts launches starts off the loop, the
 * Worker bounds them): a connector or task whose start never returns holds up no
 * request, rebalance or shutdown; what the loop awaits of plugins is bounded.
 *
 * Writes (create, update, delete, pause/resume/stop, restart, offsets) go through the
 * leader, as in Kafka Connect: a follower rejects them with HerderError `not-leader`
 * and the leader's URL, and the REST layer forwards the request there. While a
 * rebalance is underway a write first waits up to `rebalanceWaitMs` for it to end,
 * then answers 409 (`rebalance-needed`) if there is still no assignment. Stopping a
 * connector writes an empty task set and then the STOPPED target state, so its tasks
 * are revoked; offsets may change only while it is STOPPED with no tasks.
 *
 * Task restarts run on the worker that owns the task: a request reaching another
 * worker is forwarded to the owner named in the task's status (the same forwarding
 * as for the leader). Connector restarts are restart records in the config topic,
 * acted on by whoever runs the connector or its tasks.
 *
 * Exactly-once sources (exactly.once.source.support=enabled, KIP-618): before a source
 * task's transactional producer registers, the connector's earlier task generations
 * are fenced, by the leader (`fenceZombies`; other workers send it the internal
 * `PUT /connectors/{name}/fence`): when task configs were committed after the
 * connector's last `tasks-fencing-<name>` record, the producers of the task count that
 * record names are fenced and a new record with the current task count is written.
 * After its producer registered, a task checks that its task config generation is
 * still the latest and that it is still assigned here; otherwise it fails, so a task
 * of an old generation that wakes up late never commits. Offsets of an exactly-once
 * connector are altered only after a fencing round.
 *
 * Stop: stop every connector and task (offsets committed by the tasks), report them
 * UNASSIGNED and wait for those writes, then leave the group, so the others take
 * the work over at once.
 */
import type { Admin } from 'kafkajs';
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import { ConnectException } from '../api/errors.ts';
import type { ConfigProviders } from '../runtime/config-providers.ts';
import { type ConfigInfos, validationContext } from '../runtime/config-validation.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import { SerialExecutor } from '../runtime/serial-executor.ts';
import type { ExactlyOncePreflight, Worker } from '../runtime/worker.ts';
import type { ClusterConfigState, ConfigBackingStore } from '../storage/config-backing-store.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import type { StatusBackingStore } from '../storage/status-backing-store.ts';
import { AssignedWork } from './assigned-work.ts';
import { configUpdates } from './config-updates.ts';
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
  type ConnectorType,
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
import { RebalanceHandler } from './rebalance-handler.ts';
import { StatusReporter } from './status-reporter.ts';
import type { WorkerGroupMember } from './worker-group-member.ts';

export interface DistributedHerderOptions {
  worker: Worker;
  plugins: PluginRegistry;
  configs: ConfigBackingStore;
  status: StatusBackingStore;
  offsetStore: OffsetBackingStore;
  topicTracking: boolean;
  /** How long a write waits for a rebalance in progress before answering 409. */
  rebalanceWaitMs?: number;
  timers: Timers;
  logger: Logger;
  /** Applies a logger level locally (PUT /admin/loggers with scope=cluster). */
  setLoggerLevel?: (namespace: string, level: string) => void;
  /** The group member stopped for good: the worker cannot take part any more. */
  onFatal?: (error: Error) => void;
}

/** How long a task's start keeps retrying its zombie fencing through rebalances. */
const FENCE_RETRY_MS = 30_000;
const FENCE_RETRY_BACKOFF_MS = 500;
const FENCE_REQUEST_TIMEOUT_MS = 30_000;

export class DistributedHerder implements Herder {
  private readonly serial = new SerialExecutor();
  private member: WorkerGroupMember | undefined;
  private stopping = false;
  private readonly reporter: StatusReporter;
  private readonly work: AssignedWork;
  readonly rebalance: RebalanceHandler;
  private readonly offsets: OffsetContext;
  private readonly rebalanceWaitMs: number;

  constructor(private readonly o: DistributedHerderOptions) {
    this.rebalanceWaitMs = o.rebalanceWaitMs ?? 10_000;
    this.reporter = new StatusReporter({
      store: o.status,
      workerId: () => o.worker.workerId,
      generation: () => this.member?.generation ?? -1,
      topicTracking: o.topicTracking,
      logger: o.logger,
    });
    this.work = new AssignedWork({
      worker: o.worker,
      configs: o.configs,
      status: o.status,
      reporter: this.reporter,
      logger: o.logger,
      owns: (connector) => this.member?.work.connectors.includes(connector) ?? false,
      enqueue: (what, job) => this.enqueue(what, job),
      preflight: (id, generation) => this.exactlyOncePreflight(id, generation),
    });
    this.rebalance = new RebalanceHandler({
      configs: o.configs,
      status: o.status,
      work: this.work,
      reporter: this.reporter,
      run: (job) => this.serial.run(job),
      stopping: () => this.stopping,
      timers: o.timers,
      logger: o.logger,
      ...(o.onFatal ? { onFatal: o.onFatal } : {}),
      // Optional: tests give the herder a stand-in worker without metrics.
      ...(o.worker.metrics ? { metrics: o.worker.metrics.rebalance } : {}),
    });
    const stores = o.worker.offsetStores;
    this.offsets = {
      plugins: o.plugins,
      offsetStore: o.offsetStore,
      // A source's own offsets.storage.topic (tests' stand-in workers have none).
      ...(stores
        ? {
            withSourceStore: (name, config, use) =>
              stores.withStore(`connector ${name}`, o.worker.configProviders.resolve(config), use),
          }
        : {}),
      admin: (): Admin => o.worker.adminClient(),
      cluster: () => o.worker.clusterClient(),
      providers: o.worker.configProviders,
    };
  }

  /** The Worker's status listener: states and active topics go to the status topic. */
  get statusListener(): StatusReporter {
    return this.reporter;
  }

  /**
   * Joins the group through `member` (built with `this.rebalance` as its listener) and
   * follows the config topic. The stores and the worker are started by the caller.
   */
  start(member: WorkerGroupMember): void {
    this.member = member;
    this.o.configs.addListener(
      configUpdates({
        work: this.work,
        rebalance: this.rebalance,
        isLeader: () => member.isLeader,
        requestRejoin: () => member.requestRejoin(),
        enqueue: (what, job) => this.enqueue(what, job),
        stopping: () => this.stopping,
        logger: this.o.logger,
        ...(this.o.setLoggerLevel ? { setLoggerLevel: this.o.setLoggerLevel } : {}),
      }),
    );
    // Levels set for the cluster before this worker started apply to it too.
    for (const [namespace, level] of this.o.configs.loggerLevels?.() ?? [])
      this.o.setLoggerLevel?.(namespace, level);
    member.start();
  }

  /** Stops all work (reported UNASSIGNED), then leaves the group. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.rebalance.markUnstable();
    await this.serial.run(async () => {
      await this.work.stopAll();
      await this.reporter.flush();
    });
    await this.member?.stop();
    // A callback queued while the member was stopping finds `stopping` and starts nothing.
    await this.serial.run(() => this.work.stopAll());
    await this.reporter.flush();
  }

  private enqueue(what: string, job: () => Promise<void>): void {
    void this.serial
      .run(job)
      .catch((err: unknown) => this.o.logger.error({ err }, `${what} failed`));
  }

  // ---- reads ------------------------------------------------------------------------------

  private async fresh(): Promise<ClusterConfigState> {
    await this.o.configs.readToEnd();
    return this.o.configs.snapshot();
  }

  /** The connector's config; `unknown` is the request's not-found error (herder.ts's notFound). */
  private configOf(
    snapshot: ClusterConfigState,
    name: string,
    unknown: (name: string) => HerderError = notFound.connector,
  ): ConnectorConfigMap {
    const config = snapshot.connectorConfigs.get(name);
    if (config === undefined) throw unknown(name);
    return config;
  }

  private typeOf(config: ConnectorConfigMap): ConnectorType {
    return this.o.worker.connectorType(config);
  }

  private infoOf(snapshot: ClusterConfigState, name: string): ConnectorInfo {
    const config = this.configOf(snapshot, name);
    const count = snapshot.taskConfigs.get(name)?.length ?? 0;
    return {
      name,
      config: { ...config },
      tasks: Array.from({ length: count }, (_, task) => ({ connector: name, task })),
      type: this.typeOf(config),
    };
  }

  async connectors(): Promise<string[]> {
    return [...(await this.fresh()).connectorConfigs.keys()];
  }

  async connectorInfo(name: string): Promise<ConnectorInfo> {
    return this.infoOf(await this.fresh(), name);
  }

  async connectorConfig(name: string): Promise<ConnectorConfigMap> {
    return { ...this.configOf(await this.fresh(), name) };
  }

  async taskConfigs(name: string): Promise<TaskInfo[]> {
    const snapshot = await this.fresh();
    this.configOf(snapshot, name);
    return (snapshot.taskConfigs.get(name) ?? []).map((config, task) => ({
      id: { connector: name, task },
      config: { ...config },
    }));
  }

  private taskStateOf(connector: string, task: number): TaskState {
    const s = this.o.status.getTask({ connector, task });
    if (s === undefined) return { id: task, state: 'UNASSIGNED', worker_id: '' };
    return {
      id: task,
      state: s.state,
      worker_id: s.workerId,
      ...(s.trace !== null ? { trace: s.trace } : {}),
    };
  }

  private stateInfo(snapshot: ClusterConfigState, name: string): ConnectorStateInfo {
    const config = this.configOf(snapshot, name);
    const s = this.o.status.get(name);
    const count = snapshot.taskConfigs.get(name)?.length ?? 0;
    return {
      name,
      connector:
        s === undefined
          ? { state: 'UNASSIGNED', worker_id: '' }
          : {
              state: s.state,
              worker_id: s.workerId,
              ...(s.trace !== null ? { trace: s.trace } : {}),
            },
      tasks: Array.from({ length: count }, (_, task) => this.taskStateOf(name, task)),
      type: this.typeOf(config),
    };
  }

  async connectorStatus(name: string): Promise<ConnectorStateInfo> {
    const snapshot = await this.fresh();
    this.configOf(snapshot, name, notFound.connectorStatus);
    return this.stateInfo(snapshot, name);
  }

  async taskStatus(connector: string, task: number): Promise<TaskState> {
    const snapshot = await this.fresh();
    // AbstractHerder.taskStatus: one text for an unknown connector and an unknown task.
    if (
      !snapshot.connectorConfigs.has(connector) ||
      task < 0 ||
      task >= (snapshot.taskConfigs.get(connector)?.length ?? 0)
    )
      throw notFound.taskStatus(connector, task);
    return this.taskStateOf(connector, task);
  }

  /** As AbstractHerder: an unknown connector has used no topics (200, not 404). */
  async connectorActiveTopics(name: string): Promise<ActiveTopicsInfo> {
    const topics = new Set(this.o.status.getTopics(name).map((t) => t.topic));
    return { topics: [...topics].sort() };
  }

  async connectorOffsets(name: string): Promise<ConnectorOffsets> {
    const config = this.configOf(await this.fresh(), name);
    return readConnectorOffsets(this.offsets, name, config);
  }

  async validateConnectorConfig(config: ConnectorConfigMap): Promise<ConfigInfos> {
    const snapshot = await this.fresh();
    return validateWithReferences(
      this.o.worker.configProviders,
      this.o.plugins,
      config,
      validationContext(config.name, snapshot.connectorConfigs),
      this.workerValidation,
    );
  }

  private get workerValidation() {
    return {
      exactlyOnceSource: this.o.worker.exactlyOnce === 'enabled',
      connectorOffsetsTopics: true,
      clientOverridePolicy: this.o.worker.clientOverridePolicy,
    };
  }

  healthCheck(): Promise<void> {
    return this.serial.run(() => undefined);
  }

  isReady(): boolean {
    return this.rebalance.hasJoined;
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

  /**
   * Through the config topic (KIP-976): every worker applies it as it reads the record,
   * this one before the call returns, and a worker that joins later applies it at start.
   */
  async setClusterLoggerLevel(namespace: string, level: string): Promise<void> {
    if (this.o.configs.putLoggerLevel === undefined) {
      this.o.setLoggerLevel?.(namespace, level);
      return;
    }
    await this.o.configs.putLoggerLevel(namespace, level);
  }

  // ---- writes (leader only) ---------------------------------------------------------------

  /**
   * Runs `job` on the serial loop if this worker is the leader of a settled group, after
   * reading the config topic to its end; otherwise not-leader (forwarded by REST) or,
   * when no assignment arrives within rebalanceWaitMs, rebalance-needed.
   */
  private async asLeader<T>(job: (snapshot: ClusterConfigState) => Promise<T>): Promise<T> {
    if (this.stopping) throw new HerderError('conflict', 'The worker is shutting down');
    const settled = await this.rebalance.awaitStable(this.rebalanceWaitMs);
    return this.serial.run(async () => {
      const member = this.member;
      if (member === undefined || !settled || !this.rebalance.isStable) {
        throw new HerderError(
          'rebalance-needed',
          'Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.',
        );
      }
      if (!member.isLeader) {
        throw new HerderError(
          'not-leader',
          'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
          {
            leaderUrl: member.leaderUrl || undefined,
          },
        );
      }
      return job(await this.fresh());
    });
  }

  async putConnectorConfig(
    name: string,
    config: ConnectorConfigMap,
    allowReplace: boolean,
    initialState?: TargetState,
  ): Promise<Created<ConnectorInfo>> {
    const full = { ...config, name };
    return this.asLeader(async (snapshot) => {
      // On the leader's loop, against the snapshot the write is decided on: two
      // connectors created at once cannot both pass a check against each other.
      requireValidConfig(
        this.o.worker.configProviders,
        this.o.plugins,
        full,
        validationContext(name, snapshot.connectorConfigs),
        this.workerValidation,
      );
      const exists = snapshot.connectorConfigs.has(name);
      if (exists && !allowReplace)
        throw new HerderError('already-exists', `Connector ${name} already exists`);
      await this.o.configs.putConnectorConfig(
        name,
        full,
        exists ? undefined : (initialState ?? 'RUNNING'),
      );
      return { created: !exists, result: this.infoOf(this.o.configs.snapshot(), name) };
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
    return this.asLeader(async (snapshot) => {
      this.configOf(snapshot, name);
      await this.o.configs.removeConnectorConfig(name);
      await this.o.status.deleteConnector(name);
    });
  }

  restartConnector(name: string): Promise<void> {
    return this.asLeader(async (snapshot) => {
      this.configOf(snapshot, name, notFound.restart);
      await this.o.configs.putRestartRequest({
        connector: name,
        onlyFailed: false,
        includeTasks: false,
      });
    });
  }

  restartConnectorAndTasks(request: RestartRequest): Promise<ConnectorStateInfo> {
    return this.asLeader(async (snapshot) => {
      this.configOf(snapshot, request.connector, notFound.restart);
      await this.o.status.readToEnd();
      const before = this.stateInfo(snapshot, request.connector);
      const restartConnector = !request.onlyFailed || before.connector.state === 'FAILED';
      const planned: ConnectorStateInfo = {
        ...before,
        connector: restartConnector
          ? { ...before.connector, state: 'RESTARTING' }
          : before.connector,
        tasks: before.tasks.map((t) =>
          request.includeTasks &&
          (!request.onlyFailed || t.state === 'FAILED' || t.state === 'UNASSIGNED')
            ? { ...t, state: 'RESTARTING' }
            : t,
        ),
      };
      await this.o.configs.putRestartRequest(request);
      return planned;
    });
  }

  async restartTask(connector: string, task: number): Promise<void> {
    const snapshot = await this.fresh();
    this.configOf(snapshot, connector, notFound.restart);
    if (task < 0 || task >= (snapshot.taskConfigs.get(connector)?.length ?? 0))
      throw notFound.distributedTask(connector, task);
    const id = { connector, task };
    const restarted = await this.serial.run(async () => {
      if (!this.work.ownsTask(id)) return false;
      this.reporter.taskState(id, 'RESTARTING');
      await this.work.restartTask(id);
      return true;
    });
    if (restarted) return;
    const owner = this.o.status.getTask(id)?.workerId;
    if (owner === undefined || owner === '' || owner === this.o.worker.workerId) {
      throw new HerderError(
        'rebalance-needed',
        `Task ${connector}-${task} is not running on any worker right now; try again after the rebalance`,
      );
    }
    // The owner restarts it: REST forwards there as it forwards to a leader.
    throw new HerderError('not-leader', `Task ${connector}-${task} runs on ${owner}`, {
      leaderUrl: `http://${owner}`,
    });
  }

  private setTarget(name: string, target: TargetState): Promise<void> {
    return this.asLeader(async (snapshot) => {
      this.configOf(snapshot, name, notFound.targetState);
      if ((snapshot.targetStates.get(name) ?? 'RUNNING') === target) return;
      await this.o.configs.putTargetState(name, target);
    });
  }

  pauseConnector(name: string): Promise<void> {
    return this.setTarget(name, 'PAUSED');
  }

  resumeConnector(name: string): Promise<void> {
    return this.setTarget(name, 'RUNNING');
  }

  stopConnector(name: string): Promise<void> {
    return this.asLeader(async (snapshot) => {
      this.configOf(snapshot, name, notFound.targetState);
      // As Kafka Connect: no tasks first, so a worker seeing STOPPED finds none to run.
      if ((snapshot.taskConfigs.get(name)?.length ?? 0) > 0 || snapshot.inconsistent.has(name))
        await this.o.configs.putTaskConfigs(name, []);
      if ((snapshot.targetStates.get(name) ?? 'RUNNING') !== 'STOPPED')
        await this.o.configs.putTargetState(name, 'STOPPED');
    });
  }

  // ---- exactly-once sources --------------------------------------------------------------

  fenceZombies(name: string): Promise<void> {
    return this.asLeader(async (snapshot) => {
      const config = this.configOf(snapshot, name);
      if (this.typeOf(config) !== 'source')
        throw new HerderError('bad-request', `Connector ${name} is not a source connector`);
      await this.fenceRound(name, snapshot);
    });
  }

  /** One round of zombie fencing on the leader's loop, as Kafka's DistributedHerder does it. */
  private async fenceRound(name: string, snapshot: ClusterConfigState): Promise<void> {
    if (!snapshot.pendingFencing.has(name)) return;
    const taskCount = snapshot.taskCounts.get(name) ?? 0;
    const recorded = snapshot.taskCountRecords.get(name);
    // No record: no transactional producer ever ran for it. One task before and after:
    // the new task's own registration fences the old one.
    if (recorded !== undefined && !(recorded === 1 && taskCount === 1)) {
      const generation = snapshot.taskConfigGenerations.get(name);
      await this.o.worker.fenceZombies(name, recorded);
      if ((await this.fresh()).taskConfigGenerations.get(name) !== generation)
        throw new HerderError(
          'conflict',
          'Fencing failed because new task configurations were generated for the connector',
        );
    }
    await this.o.configs.putTaskCountRecord(name, taskCount);
  }

  /** Kafka's pre- and post-producer checks of an exactly-once source task. */
  private exactlyOncePreflight(
    id: { connector: string; task: number },
    generation: number,
  ): ExactlyOncePreflight | undefined {
    if (this.o.worker.exactlyOnce !== 'enabled') return undefined;
    const config = this.o.configs.snapshot().connectorConfigs.get(id.connector);
    if (config === undefined || this.typeOf(config) !== 'source') return undefined;
    const key = `${id.connector}-${id.task}`;
    return {
      beforeProducerInit: () => this.fenceBeforeStart(id.connector, key),
      afterProducerInit: async () => {
        await this.o.configs.readToEnd();
        if (this.o.configs.snapshot().taskConfigGenerations.get(id.connector) !== generation)
          throw new ConnectException(
            `Cannot start source task ${key} with exactly-once support as the connector has already generated a new set of task configs`,
          );
        const assigned = this.member?.work.tasks.some(
          (t) => t.connector === id.connector && t.task === id.task,
        );
        if (!assigned)
          throw new ConnectException(
            `Cannot start source task ${key} as it has already been revoked from this worker`,
          );
      },
    };
  }

  /**
   * The fencing a task needs before it starts: on the leader itself, else asked of the
   * leader over REST. A rebalance in progress or an unreachable leader is retried for
   * up to FENCE_RETRY_MS (the task's start deadline bounds it as well).
   */
  private async fenceBeforeStart(connector: string, key: string): Promise<void> {
    const deadline = Date.now() + FENCE_RETRY_MS;
    for (;;) {
      try {
        await this.fenceZombies(connector);
        return;
      } catch (e) {
        let failure: unknown = e;
        if (e instanceof HerderError && e.kind === 'not-leader' && e.leaderUrl) {
          failure = await this.fenceOnLeader(e.leaderUrl, connector);
          if (failure === undefined) return;
        } else if (!(e instanceof HerderError && e.kind === 'rebalance-needed')) {
          throw new ConnectException('Failed to perform round of zombie fencing', { cause: e });
        }
        if (this.stopping || Date.now() >= deadline)
          throw new ConnectException(
            `Failed to perform round of zombie fencing for task ${key}: ${(failure as Error).message}`,
            { cause: failure },
          );
        this.o.logger.warn(
          `Zombie fencing for task ${key} did not complete (${(failure as Error).message}); retrying`,
        );
        await new Promise<void>((resolve) =>
          this.o.timers.schedule(FENCE_RETRY_BACKOFF_MS, resolve),
        );
      }
    }
  }

  /** PUT /connectors/{name}/fence on the leader; the error, or undefined when it succeeded. */
  private async fenceOnLeader(leaderUrl: string, connector: string): Promise<Error | undefined> {
    const url = `${leaderUrl.replace(/\/+$/, '')}/connectors/${encodeURIComponent(connector)}/fence`;
    try {
      const res = await fetch(url, {
        method: 'PUT',
        signal: AbortSignal.timeout(FENCE_REQUEST_TIMEOUT_MS),
      });
      if (res.ok) return undefined;
      const body = await res.text();
      return new Error(`the leader at ${leaderUrl} answered ${res.status}: ${body}`);
    } catch (e) {
      return new Error(`the leader at ${leaderUrl} could not be reached: ${(e as Error).message}`);
    }
  }

  /** As AbstractHerder: nothing to forget for an unknown connector (202, not 404). */
  async resetConnectorActiveTopics(name: string): Promise<void> {
    for (const t of this.o.status.getTopics(name)) await this.o.status.deleteTopic(name, t.topic);
  }

  private requireStopped(snapshot: ClusterConfigState, name: string): ConnectorConfigMap {
    const config = this.configOf(snapshot, name);
    if (
      snapshot.targetStates.get(name) !== 'STOPPED' ||
      (snapshot.taskConfigs.get(name)?.length ?? 0) > 0
    ) {
      throw connectorNotStopped(name);
    }
    return config;
  }

  alterConnectorOffsets(name: string, offsets: ConnectorOffset[]): Promise<OffsetsMessage> {
    return this.asLeader(async (snapshot) => {
      const config = await this.fencedBeforeOffsets(name, this.requireStopped(snapshot, name));
      return alterConnectorOffsets(this.offsets, name, config, offsets);
    });
  }

  resetConnectorOffsets(name: string): Promise<OffsetsMessage> {
    return this.asLeader(async (snapshot) => {
      const config = await this.fencedBeforeOffsets(name, this.requireStopped(snapshot, name));
      return resetConnectorOffsets(this.offsets, name, config);
    });
  }

  /**
   * As Kafka: an exactly-once source's zombies are fenced before its offsets change,
   * so none commits over the new offsets; the checks are made again afterwards.
   */
  private async fencedBeforeOffsets(
    name: string,
    config: ConnectorConfigMap,
  ): Promise<ConnectorConfigMap> {
    if (this.o.worker.exactlyOnce !== 'enabled' || this.typeOf(config) !== 'source') return config;
    await this.fenceRound(name, this.o.configs.snapshot());
    return this.requireStopped(await this.fresh(), name);
  }
}
