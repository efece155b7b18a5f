/**
 * WorkerConnector: one connector instance on this worker and its state machine.
 *
 *   target RUNNING  -> connector.start(config, context) -> RUNNING
 *   target PAUSED   -> connector stopped (if it was started)  -> PAUSED
 *   target STOPPED  -> connector stopped (if it was started)  -> STOPPED
 *   any call fails  -> FAILED with the trace (also context.raiseError)
 *   stop()          -> connector stopped, state UNASSIGNED (unless FAILED)
 *   deleted()       -> connector.deleted(config), after stop(), only on a delete
 * A paused connector is stopped rather than left running, as Kafka Connect suspends
 * it; resuming starts it again with the same config. Transitions are serialised; all
 * calls on the connector instance go through one PluginCalls, one at a time.
 *
 * Deadlines (plugin-deadlines.ts): start() and taskConfigs() get
 * connector.start.timeout.ms, stop() and deleted() task.shutdown.graceful.timeout.ms.
 * A start past its deadline fails the connector ("did not start within N ms"); if it
 * returns later, the abandoned instance is stopped then. stop() never waits behind a
 * hung call: it ends the instance at once (it reports nothing more but its
 * UNASSIGNED), and the connector's own stop() is made once the hung call settles, so
 * a stuck start never blocks a delete, a restart or the worker's shutdown. Likewise a
 * transition to another target (pause, stop) ends the wait of one in progress: the
 * connector is PAUSED or STOPPED at once, and the start it gave up on is stopped if it
 * returns. A start asked for later still begins only after that call settled.
 */
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import type { Connector, ConnectorConfig, SourceConnector, TaskConfig } from '../api/connector.ts';
import { ConnectException } from '../api/errors.ts';
import type { OffsetStorageReader } from '../api/offset-storage-reader.ts';
import type { TargetState } from '../herder/herder.ts';
import { type CallOutcome, PluginCalls } from './plugin-deadlines.ts';
import { SerialExecutor } from './serial-executor.ts';
import { errorTrace, type StatusListener } from './status-listener.ts';

export interface WorkerConnectorOptions {
  name: string;
  type: 'source' | 'sink';
  connector: Connector;
  config: ConnectorConfig;
  offsetReader: OffsetStorageReader;
  status: StatusListener;
  logger: Logger;
  /** The connector asked for new task configs (context.requestTaskReconfiguration). */
  onReconfigure: () => void;
  timers: Timers;
  /** connector.start.timeout.ms: start() and taskConfigs(). */
  startTimeoutMs: number;
  /** task.shutdown.graceful.timeout.ms: stop() and deleted(). */
  stopTimeoutMs: number;
  /** Added to every task config as `task.class`, as Kafka Connect's Worker adds it. */
  taskClass?: string;
}

export class WorkerConnector {
  private readonly serial = new SerialExecutor();
  private readonly calls: PluginCalls;
  /** start() returned and stop() has not been called since. */
  private started = false;
  private failedWith: unknown;
  private state: TargetState | 'FAILED' | 'UNASSIGNED' = 'UNASSIGNED';
  /** Aborted by stop(): the instance is done; waits in progress end at once. */
  private readonly ended = new AbortController();
  /** The transition running now, which a transition to another target interrupts. */
  private current: { target: TargetState; interrupt: AbortController } | null = null;

  constructor(private readonly o: WorkerConnectorOptions) {
    this.calls = new PluginCalls(o.timers);
  }

  get name(): string {
    return this.o.name;
  }

  /** The config the instance was created with (what `deleted` gets). */
  get config(): ConnectorConfig {
    return this.o.config;
  }

  get isRunning(): boolean {
    return this.started && this.failedWith === undefined && !this.isEnded;
  }

  get isFailed(): boolean {
    return this.failedWith !== undefined;
  }

  private get isEnded(): boolean {
    return this.ended.signal.aborted;
  }

  /** Drive the connector to `target`; resolves false when that failed (state FAILED). */
  transitionTo(target: TargetState): Promise<boolean> {
    if (this.current !== null && this.current.target !== target) this.current.interrupt.abort();
    return this.serial.run(async () => {
      const interrupt = new AbortController();
      this.current = { target, interrupt };
      try {
        return await this.transition(
          target,
          AbortSignal.any([this.ended.signal, interrupt.signal]),
        );
      } finally {
        this.current = null;
      }
    });
  }

  private async transition(target: TargetState, interrupt: AbortSignal): Promise<boolean> {
    if (this.failedWith !== undefined || this.isEnded) return false;
    if (target === 'RUNNING') {
      if (!this.started) {
        const context = {
          connectorName: this.o.name,
          requestTaskReconfiguration: () => {
            if (!this.isEnded) this.o.onReconfigure();
          },
          raiseError: (error: Error) => this.fail(error),
          ...(this.o.type === 'source' ? { offsetStorageReader: this.o.offsetReader } : {}),
        };
        const outcome = await this.calls.run(
          () => (this.o.connector as SourceConnector).start(this.o.config, context as never),
          this.o.startTimeoutMs,
          interrupt,
        );
        if (outcome.kind !== 'done') {
          if (outcome.kind === 'late' || outcome.kind === 'interrupted') {
            this.stopWhenStarted(outcome.settled);
          }
          if (outcome.kind === 'failed') this.fail(outcome.error);
          if (outcome.kind === 'late') {
            this.fail(
              new ConnectException(
                `Connector ${this.o.name} did not start within ${this.o.startTimeoutMs} ms (connector.start.timeout.ms); its start was abandoned`,
              ),
            );
          }
          return false;
        }
        this.started = true;
      }
    } else if (this.started) {
      this.started = false;
      const outcome = await this.calls.run(
        () => this.o.connector.stop(),
        this.o.stopTimeoutMs,
        interrupt,
      );
      if (outcome.kind === 'failed') this.fail(outcome.error);
      if (outcome.kind === 'late') {
        this.fail(
          new ConnectException(
            `Connector ${this.o.name} did not stop within ${this.o.stopTimeoutMs} ms (task.shutdown.graceful.timeout.ms)`,
          ),
        );
      }
      if (outcome.kind !== 'done') return false;
    }
    if (this.failedWith !== undefined || this.isEnded) return false;
    this.state = target;
    this.o.status.connectorState(this.o.name, target);
    return true;
  }

  /**
   * A start abandoned (past its deadline, or because the instance was stopped) that
   * returns later leaves a started connector nobody uses: stop it then.
   */
  private stopWhenStarted(settled: Promise<boolean>): void {
    // Queued now, so it comes before any later call (a start asked for afterwards).
    void this.calls.queue(async () => {
      if (!(await settled)) return;
      this.o.logger.warn(
        { connector: this.o.name },
        `Connector ${this.o.name} returned from an abandoned start; stopping that instance`,
      );
      await this.stopLogged();
    });
  }

  /** connector.stop(), its failure logged; for calls nobody waits for. */
  private async stopLogged(): Promise<void> {
    try {
      await this.o.connector.stop();
    } catch (e) {
      this.o.logger.error(
        { err: e, connector: this.o.name },
        `Connector ${this.o.name} failed to stop`,
      );
    }
  }

  /** Task configs for at most `maxTasks` tasks; throws ConnectException when not running. */
  taskConfigs(maxTasks: number, enforce: boolean): Promise<TaskConfig[]> {
    return this.serial.run(async () => {
      if (!this.isRunning) throw new ConnectException(`Connector ${this.o.name} is not running`);
      const outcome = await this.calls.run(
        () => this.o.connector.taskConfigs(maxTasks),
        this.o.startTimeoutMs,
        this.ended.signal,
      );
      if (outcome.kind !== 'done') {
        const error =
          outcome.kind === 'failed'
            ? outcome.error
            : new ConnectException(
                outcome.kind === 'late'
                  ? `Connector ${this.o.name} did not return its task configs within ${this.o.startTimeoutMs} ms (connector.start.timeout.ms)`
                  : `Connector ${this.o.name} was stopped while generating task configs`,
              );
        this.fail(error);
        throw error;
      }
      const configs = outcome.value;
      if (configs.length > maxTasks) {
        const message = `The connector ${this.o.name} has generated ${configs.length} tasks, which is greater than ${maxTasks}, the maximum number of tasks it is configured to create.`;
        if (enforce) {
          const error = new ConnectException(message);
          this.fail(error);
          throw error;
        }
        this.o.logger.warn(message);
      }
      const taskClass = this.o.taskClass;
      return taskClass === undefined
        ? configs
        : configs.map((c) => ({ ...c, 'task.class': taskClass }));
    });
  }

  private fail(error: unknown): void {
    // An ended instance reports nothing: a newer instance (or none) owns the state.
    if (this.failedWith !== undefined || this.isEnded) return;
    this.failedWith = error;
    this.state = 'FAILED';
    this.o.logger.error({ err: error, connector: this.o.name }, `Connector ${this.o.name} failed`);
    this.o.status.connectorState(this.o.name, 'FAILED', errorTrace(error));
  }

  /** Stop the instance for good (delete, restart, shutdown); see the header on hung calls. */
  stop(): Promise<void> {
    this.ended.abort();
    return this.serial.run(async () => {
      if (this.started) {
        this.started = false;
        // Behind a hung call the stop cannot begin: it is made when that call settles,
        // and nobody waits for it.
        if (this.calls.busy) void this.calls.queue(() => this.stopLogged());
        else
          this.logStop(await this.calls.run(() => this.o.connector.stop(), this.o.stopTimeoutMs));
      }
      if (this.failedWith === undefined) this.o.status.connectorState(this.o.name, 'UNASSIGNED');
      this.state = 'UNASSIGNED';
    });
  }

  private logStop(outcome: CallOutcome<unknown>): void {
    const { logger, name } = this.o;
    if (outcome.kind === 'failed') {
      logger.error({ err: outcome.error, connector: name }, `Connector ${name} failed to stop`);
    } else if (outcome.kind === 'late') {
      logger.error(
        { connector: name },
        `Connector ${name} did not stop within ${this.o.stopTimeoutMs} ms (task.shutdown.graceful.timeout.ms); abandoned it`,
      );
    }
  }

  /** Whether a call on the instance is still running (an abandoned start or stop). */
  get hasCallInFlight(): boolean {
    return this.calls.busy;
  }

  /**
   * Step 5 of the lifecycle (connector.ts), after stop(): `deleted(config)` under the
   * stop deadline. Errors are logged at ERROR; it never rejects, so a failing hook
   * never blocks the delete.
   */
  deleted(): Promise<void> {
    return this.serial.run(async () => {
      const { connector, logger, name } = this.o;
      if (connector.deleted === undefined) return;
      const outcome = await this.calls.run(
        () => connector.deleted?.(this.o.config),
        this.o.stopTimeoutMs,
      );
      if (outcome.kind === 'failed') {
        logger.error(
          { err: outcome.error, connector: name },
          `Connector ${name} failed in deleted(); the connector is deleted anyway`,
        );
      } else if (outcome.kind === 'late') {
        logger.error(
          { connector: name },
          `Connector ${name} did not return from deleted() within ${this.o.stopTimeoutMs} ms (task.shutdown.graceful.timeout.ms); the connector is deleted anyway`,
        );
      }
    });
  }

  get currentState(): string {
    return this.state;
  }
}
