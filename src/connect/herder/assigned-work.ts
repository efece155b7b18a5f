/**
 * What this worker runs of the cluster's connectors and tasks: the part of Kafka
 * Connect's DistributedHerder that turns assignments and config records into Worker
 * calls. The group member decides what is ours (rebalance-handler.ts); this class
 * starts it, keeps it in step with the config topic, and stops it.
 *
 * Every method is called from the distributed herder's serial loop, one at a time,
 * so a connector or task is never started and stopped by two calls at once.
 *
 * Plugin starts run off that loop (DESIGN.md: one plugin never stops the worker): a
 * connector's or a task's start is launched, not awaited, so a start that never
 * returns holds up no rebalance, config event or request; the Worker fails it at its
 * deadline (task.start.timeout.ms, connector.start.timeout.ms). What the loop awaits
 * is bounded: stops (task.shutdown.graceful.timeout.ms) and task config generation.
 *
 *   start(work)        connectors first, then tasks, each from the config snapshot (a
 *                      task whose config is not committed yet is skipped: the commit
 *                      will bring it). A RUNNING connector generates its task configs
 *                      in a job queued on the loop once its start returned.
 *   reconfigure(name)  the connector's owner asks it for task configs (tasks.max) and,
 *                      when they differ from the committed ones, writes them followed
 *                      by the commit record. Kafka Connect forwards this write to the
 *                      leader over an internal REST route; here the owner writes it,
 *                      which is safe because only the owner of the current generation
 *                      writes (`owns` is checked right before) and a worker that lost
 *                      its membership has stopped its connectors first.
 *   config records     a changed connector config restarts the connector (and the
 *                      tasks whose connector or task config changed); a new commit
 *                      restarts changed tasks and stops tasks beyond the new count; a
 *                      target state goes to the connector and its tasks here.
 *   stop(work)         stops tasks then connectors and reports them UNASSIGNED, so the
 *                      leader may hand them over at once (see status-reporter.ts).
 *   connector removed  (a tombstone in the config topic: the connector was deleted) its
 *                      tasks and the connector stop, then the connector's deleted(config)
 *                      hook runs here, on the worker that ran the connector.
 */
import type { Logger } from '../../util/logger.ts';
import type { ExactlyOncePreflight, Worker } from '../runtime/worker.ts';
import type { ClusterConfigState, ConfigBackingStore } from '../storage/config-backing-store.ts';
import type { StatusBackingStore } from '../storage/status-backing-store.ts';
import type { ConnectorConfigMap, ConnectorTaskId, RestartRequest } from './herder.ts';
import type { WorkLoad } from './incremental-cooperative-assignor.ts';
import type { StatusReporter } from './status-reporter.ts';

export interface AssignedWorkOptions {
  worker: Worker;
  configs: ConfigBackingStore;
  status: StatusBackingStore;
  reporter: StatusReporter;
  logger: Logger;
  /** Whether the group still gives this worker the connector (checked before writing). */
  owns: (connector: string) => boolean;
  /** Queue a job on the herder's serial loop (used for connectors' reconfiguration requests). */
  enqueue: (what: string, job: () => Promise<void>) => void;
  /**
   * For a source task when the worker runs exactly-once: the herder's checks around
   * its producer, given the connector's task config generation the task starts with.
   */
  preflight?: (id: ConnectorTaskId, generation: number) => ExactlyOncePreflight | undefined;
}

const taskKeyOf = (id: ConnectorTaskId) => `${id.connector}-${id.task}`;

export class AssignedWork {
  private readonly connectors = new Set<string>();
  /** Running tasks and the configs they were started with (JSON of connector + task config). */
  private readonly tasks = new Map<string, { id: ConnectorTaskId; started: string }>();

  constructor(private readonly o: AssignedWorkOptions) {}

  /** Everything this worker runs now. */
  get running(): WorkLoad {
    return {
      connectors: [...this.connectors],
      tasks: [...this.tasks.values()].map((t) => t.id),
    };
  }

  ownsTask(id: ConnectorTaskId): boolean {
    return this.tasks.has(taskKeyOf(id));
  }

  async start(work: WorkLoad): Promise<void> {
    for (const name of work.connectors) await this.startConnector(name);
    for (const id of work.tasks) await this.startTask(id);
  }

  async stop(work: WorkLoad, deleted = false): Promise<void> {
    const tasks = work.tasks.filter((id) => this.tasks.has(taskKeyOf(id)));
    for (const id of tasks) this.tasks.delete(taskKeyOf(id));
    await this.o.worker.stopTasks(tasks);
    const connectors = work.connectors.filter((c) => this.connectors.has(c));
    for (const name of connectors) this.connectors.delete(name);
    // In parallel: each stop is bounded, and they do not wait on each other.
    await Promise.all(
      connectors.map((name) =>
        deleted ? this.o.worker.deleteConnector(name) : this.o.worker.stopConnector(name),
      ),
    );
    this.o.reporter.unassigned({ connectors, tasks });
  }

  async stopAll(): Promise<void> {
    await this.stop(this.running);
  }

  private async startConnector(name: string): Promise<void> {
    const snapshot = this.o.configs.snapshot();
    const config = snapshot.connectorConfigs.get(name);
    if (config === undefined || this.connectors.has(name)) return;
    const target = snapshot.targetStates.get(name) ?? 'RUNNING';
    this.connectors.add(name);
    const reconfigure = () => this.o.enqueue(`reconfiguring ${name}`, () => this.reconfigure(name));
    // Not awaited (see the header); the task configs follow on the loop once it runs.
    void this.o.worker.startConnector(name, config, target, reconfigure).then(
      (ok) => {
        if (ok && target === 'RUNNING') reconfigure();
      },
      (err: unknown) => this.o.logger.error({ err }, `Connector ${name} could not be started`),
    );
  }

  private async startTask(id: ConnectorTaskId): Promise<void> {
    const snapshot = this.o.configs.snapshot();
    const connectorConfig = snapshot.connectorConfigs.get(id.connector);
    const taskConfig = snapshot.taskConfigs.get(id.connector)?.[id.task];
    const key = taskKeyOf(id);
    if (connectorConfig === undefined || taskConfig === undefined || this.tasks.has(key)) {
      this.o.logger.info({ task: key }, 'assigned task has no committed config yet; not started');
      return;
    }
    const target = snapshot.targetStates.get(id.connector) ?? 'RUNNING';
    this.tasks.set(key, { id, started: startedWith(connectorConfig, taskConfig) });
    // Not awaited (see the header): its states reach the status topic by themselves.
    const generation = snapshot.taskConfigGenerations.get(id.connector) ?? 0;
    void this.o.worker
      .startTask(id, connectorConfig, taskConfig, target, this.o.preflight?.(id, generation))
      .catch((err: unknown) => this.o.logger.error({ err }, `Task ${key} could not be started`));
  }

  /** New task configs from the connector, written only when they changed (owner only). */
  async reconfigure(name: string): Promise<void> {
    const snapshot = this.o.configs.snapshot();
    const config = snapshot.connectorConfigs.get(name);
    if (
      config === undefined ||
      !this.connectors.has(name) ||
      (snapshot.targetStates.get(name) ?? 'RUNNING') !== 'RUNNING' ||
      !this.o.worker.isConnectorRunning(name)
    )
      return;
    let generated: ConnectorConfigMap[];
    try {
      generated = (await this.o.worker.connectorTaskConfigs(name, config)).map((c) => ({ ...c }));
    } catch (err) {
      this.o.logger.error({ err }, `Connector ${name} failed to generate task configs`);
      return;
    }
    const current = this.o.configs.snapshot();
    if (!current.inconsistent.has(name) && sameConfigs(generated, current.taskConfigs.get(name)))
      return;
    const now = current.connectorConfigs.get(name);
    // Not ours any more, or the config changed meanwhile (its own update regenerates).
    if (!this.o.owns(name) || now === undefined || !sameConfigs([now], [config])) return;
    await this.o.configs.putTaskConfigs(name, generated);
  }

  // ---- config topic events --------------------------------------------------------------

  async onConnectorConfigUpdate(name: string): Promise<void> {
    if (this.connectors.has(name)) {
      this.connectors.delete(name);
      await this.o.worker.stopConnector(name);
      await this.startConnector(name);
    }
    await this.restartChangedTasks(name);
  }

  async onTaskConfigUpdate(connector: string): Promise<void> {
    await this.restartChangedTasks(connector);
  }

  async onConnectorRemoved(name: string): Promise<void> {
    const owned: WorkLoad = {
      connectors: this.connectors.has(name) ? [name] : [],
      tasks: [...this.tasks.values()].map((t) => t.id).filter((id) => id.connector === name),
    };
    if (owned.connectors.length + owned.tasks.length === 0) return;
    // Deleted, not merely stopped: the connector's deleted(config) hook runs too.
    await this.stop(owned, true);
    await this.o.reporter.flush();
    // The connector is gone: its statuses go too (after our own UNASSIGNED reports).
    await this.o.status.deleteConnector(name);
  }

  async onTargetStateChange(name: string): Promise<void> {
    const target = this.o.configs.snapshot().targetStates.get(name) ?? 'RUNNING';
    const hasTasks = [...this.tasks.values()].some((t) => t.id.connector === name);
    if (!this.connectors.has(name) && !hasTasks) return;
    // Tasks take it at once; the connector's transition may wait behind its start, so
    // it is not awaited here and a resumed connector's task configs follow on the loop.
    void this.o.worker.setConnectorTargetState(name, target).then(
      () => {
        if (target === 'RUNNING')
          this.o.enqueue(`reconfiguring ${name}`, () => this.reconfigure(name));
      },
      (err: unknown) => this.o.logger.error({ err }, `Connector ${name} failed to change state`),
    );
  }

  /** A restart request read from the config topic: restart what we run of it. */
  async onRestartRequest(request: RestartRequest): Promise<void> {
    const name = request.connector;
    if (this.connectors.has(name)) {
      const state = this.o.status.get(name)?.state;
      if (!request.onlyFailed || state === 'FAILED') {
        this.o.reporter.connectorState(name, 'RESTARTING');
        this.connectors.delete(name);
        await this.o.worker.stopConnector(name);
        await this.startConnector(name);
      }
    }
    if (!request.includeTasks) return;
    for (const { id } of [...this.tasks.values()]) {
      if (id.connector !== name) continue;
      const state = this.o.status.getTask(id)?.state;
      if (request.onlyFailed && state !== 'FAILED' && state !== 'UNASSIGNED') continue;
      this.o.reporter.taskState(id, 'RESTARTING');
      await this.restartTask(id);
    }
  }

  async restartTask(id: ConnectorTaskId): Promise<void> {
    this.tasks.delete(taskKeyOf(id));
    await this.o.worker.stopTasks([id]);
    await this.startTask(id);
  }

  /** Restart tasks whose configs changed; stop those the new commit no longer has. */
  private async restartChangedTasks(connector: string): Promise<void> {
    const snapshot: ClusterConfigState = this.o.configs.snapshot();
    const connectorConfig = snapshot.connectorConfigs.get(connector);
    const taskConfigs = snapshot.taskConfigs.get(connector) ?? [];
    for (const { id, started } of [...this.tasks.values()]) {
      if (id.connector !== connector) continue;
      const taskConfig = taskConfigs[id.task];
      if (connectorConfig === undefined || taskConfig === undefined) {
        // Beyond the new task count: stop it now; the next rebalance revokes it.
        this.tasks.delete(taskKeyOf(id));
        await this.o.worker.stopTasks([id]);
        this.o.reporter.unassigned({ connectors: [], tasks: [id] });
        continue;
      }
      if (startedWith(connectorConfig, taskConfig) !== started) await this.restartTask(id);
    }
  }
}

function startedWith(connector: ConnectorConfigMap, task: ConnectorConfigMap): string {
  return JSON.stringify([sorted(connector), sorted(task)]);
}

function sorted(config: ConnectorConfigMap): Array<[string, string]> {
  return Object.entries(config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function sameConfigs(
  a: readonly ConnectorConfigMap[],
  b: readonly ConnectorConfigMap[] | undefined,
): boolean {
  if (b === undefined || a.length !== b.length) return false;
  return a.every((c, i) => JSON.stringify(sorted(c)) === JSON.stringify(sorted(b[i]!)));
}
