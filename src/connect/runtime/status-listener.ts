/**
 * How the worker reports connector and task states. The worker only publishes
 * transitions; a status store (memory-status-backing-store.ts in standalone mode, the
 * status topic in distributed mode) keeps them and answers REST status queries.
 *
 * States (Kafka Connect's): UNASSIGNED (known, not running anywhere yet), RUNNING,
 * PAUSED, STOPPED, FAILED (with the error's trace), RESTARTING (a restart is planned).
 * Listeners are called synchronously from the worker's event loop and must not throw.
 */
import type { ConnectorState, ConnectorTaskId } from '../herder/herder.ts';

export type { ConnectorState, ConnectorTaskId };

export interface StatusListener {
  connectorState(connector: string, state: ConnectorState, trace?: string): void;
  taskState(id: ConnectorTaskId, state: ConnectorState, trace?: string): void;
  /** The connector was deleted: forget its and its tasks' states. */
  connectorDeleted?(connector: string): void;
  /** A task produced to or consumed from `topic` (first time per task): REST /topics. */
  topicUsed?(connector: string, topic: string): void;
}

/** The trace Kafka Connect shows for a FAILED state: the stack, causes included. */
export function errorTrace(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    if (current instanceof Error) {
      parts.push(current.stack ?? `${current.name}: ${current.message}`);
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.join('\nCaused by: ');
}

export function taskIdString(id: ConnectorTaskId): string {
  return `${id.connector}-${id.task}`;
}
