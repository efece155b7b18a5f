/**
 * Connector and task states kept in memory (standalone mode: states are rebuilt when
 * the worker restarts its connectors). Fed by the worker as a StatusListener; read by
 * the herder for REST status answers, stamped with this worker's id.
 *
 * A state keeps the trace it was reported with, whatever the state, as the status
 * topic does: FAILED carries the error, RUNNING may carry what holds a task up
 * (reportTrouble, see task-trouble.ts). No trace (or an empty one) is left out of the
 * answer, as Kafka Connect's REST API leaves it out.
 */
import type {
  ConnectorState,
  ConnectorStateEntry,
  ConnectorTaskId,
  TaskState,
} from '../herder/herder.ts';
import type { StatusListener } from '../runtime/status-listener.ts';

export class MemoryStatusBackingStore implements StatusListener {
  private readonly connectors = new Map<string, ConnectorStateEntry>();
  private readonly tasks = new Map<string, Map<number, TaskState>>();

  /** Settable: standalone mode learns its REST port (hence its id) after binding. */
  constructor(public workerId: string) {}

  connectorState(connector: string, state: ConnectorState, trace?: string): void {
    this.connectors.set(connector, {
      state,
      worker_id: this.workerId,
      ...traced(trace),
    });
  }

  taskState(id: ConnectorTaskId, state: ConnectorState, trace?: string): void {
    let byTask = this.tasks.get(id.connector);
    if (byTask === undefined) {
      byTask = new Map();
      this.tasks.set(id.connector, byTask);
    }
    byTask.set(id.task, {
      id: id.task,
      state,
      worker_id: this.workerId,
      ...traced(trace),
    });
  }

  connectorDeleted(connector: string): void {
    this.connectors.delete(connector);
    this.tasks.delete(connector);
  }

  /** Forget tasks at or above `count` (the connector now has fewer tasks). */
  trimTasks(connector: string, count: number): void {
    const byTask = this.tasks.get(connector);
    if (byTask === undefined) return;
    for (const task of [...byTask.keys()]) if (task >= count) byTask.delete(task);
  }

  connector(name: string): ConnectorStateEntry | undefined {
    return this.connectors.get(name);
  }

  task(id: ConnectorTaskId): TaskState | undefined {
    return this.tasks.get(id.connector)?.get(id.task);
  }

  connectorTasks(name: string): TaskState[] {
    return [...(this.tasks.get(name)?.values() ?? [])].sort((a, b) => a.id - b.id);
  }
}

function traced(trace: string | undefined): { trace?: string } {
  return trace === undefined || trace === '' ? {} : { trace };
}
