/**
 * WorkerConnector: one connector instance on this worker and its state machine.
 *
 *   target RUNNING  -> connector.start(config, context) -> RUNNING
 *   target PAUSED   -> connector stopped (if it was started)  -> PAUSED
 *   target STOPPED  -> connector stopped (if it was started)  -> STOPPED
 *   any call fails  -> FAILED with the trace (also context.raiseError)
 *   stop()          -> connector stopped, state UNASSIGNED (unless FAILED)
 * A paused connector is stopped rather than left running, as Kafka Connect suspends
 * it; resuming starts it again with the same config. Transitions are serialised; all
 * calls on the connector instance come from here, one at a time.
 */
import type { Logger } from '../../util/logger.ts';
import type { Connector, ConnectorConfig, SourceConnector, TaskConfig } from '../api/connector.ts';
import { ConnectException } from '../api/errors.ts';
import type { OffsetStorageReader } from '../api/offset-storage-reader.ts';
import type { TargetState } from '../herder/herder.ts';
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
}

export class WorkerConnector {
  private readonly serial = new SerialExecutor();
  private started = false;
  private failedWith: unknown;
  private state: TargetState | 'FAILED' | 'UNASSIGNED' = 'UNASSIGNED';

  constructor(private readonly o: WorkerConnectorOptions) {}

  get name(): string {
    return this.o.name;
  }

  get isRunning(): boolean {
    return this.started && this.failedWith === undefined;
  }

  get isFailed(): boolean {
    return this.failedWith !== undefined;
  }

  /** Drive the connector to `target`; resolves false when that failed (state FAILED). */
  transitionTo(target: TargetState): Promise<boolean> {
    return this.serial.run(async () => {
      if (this.failedWith !== undefined) return false;
      try {
        if (target === 'RUNNING') {
          if (!this.started) {
            const context = {
              connectorName: this.o.name,
              requestTaskReconfiguration: () => this.o.onReconfigure(),
              raiseError: (error: Error) => this.fail(error),
              ...(this.o.type === 'source' ? { offsetStorageReader: this.o.offsetReader } : {}),
            };
            await (this.o.connector as SourceConnector).start(this.o.config, context as never);
            this.started = true;
          }
        } else if (this.started) {
          this.started = false;
          await this.o.connector.stop();
        }
      } catch (e) {
        this.fail(e);
        return false;
      }
      if (this.failedWith !== undefined) return false;
      this.state = target;
      this.o.status.connectorState(this.o.name, target);
      return true;
    });
  }

  /** Task configs for at most `maxTasks` tasks; throws ConnectException when not running. */
  taskConfigs(maxTasks: number, enforce: boolean): Promise<TaskConfig[]> {
    return this.serial.run(async () => {
      if (!this.isRunning) throw new ConnectException(`Connector ${this.o.name} is not running`);
      let configs: TaskConfig[];
      try {
        configs = await this.o.connector.taskConfigs(maxTasks);
      } catch (e) {
        this.fail(e);
        throw e;
      }
      if (configs.length > maxTasks) {
        const message = `The connector ${this.o.name} has generated ${configs.length} tasks, which is greater than ${maxTasks}, the maximum number of tasks it is configured to create.`;
        if (enforce) {
          const error = new ConnectException(message);
          this.fail(error);
          throw error;
        }
        this.o.logger.warn(message);
      }
      return configs;
    });
  }

  private fail(error: unknown): void {
    if (this.failedWith !== undefined) return;
    this.failedWith = error;
    this.state = 'FAILED';
    this.o.logger.error({ err: error, connector: this.o.name }, `Connector ${this.o.name} failed`);
    this.o.status.connectorState(this.o.name, 'FAILED', errorTrace(error));
  }

  /** Stop the instance for good (delete, restart, shutdown). */
  stop(): Promise<void> {
    return this.serial.run(async () => {
      if (this.started) {
        this.started = false;
        try {
          await this.o.connector.stop();
        } catch (e) {
          this.o.logger.error(
            { err: e, connector: this.o.name },
            `Connector ${this.o.name} failed to stop`,
          );
        }
      }
      if (this.failedWith === undefined) this.o.status.connectorState(this.o.name, 'UNASSIGNED');
      this.state = 'UNASSIGNED';
    });
  }

  get currentState(): string {
    return this.state;
  }
}
