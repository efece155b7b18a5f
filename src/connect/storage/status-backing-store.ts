/**
 * Connector and task states as the cluster sees them (Kafka Connect's
 * StatusBackingStore): the status topic in distributed mode
 * (kafka-status-backing-store.ts), memory in standalone mode.
 *
 * Every status carries the worker that wrote it and the group generation it was
 * written in. `put` always writes; `putSafe` (used when a worker reports that it
 * stopped something, e.g. UNASSIGNED on revocation or shutdown) is refused when the
 * current status belongs to another worker and a newer generation, so a slow
 * worker cannot overwrite the status of the worker that took the work over.
 * Reads answer the store's current view; `readToEnd()` first to see everything.
 */
import type { ConnectorState, ConnectorTaskId } from '../herder/herder.ts';

export interface ConnectorStatus {
  connector: string;
  state: ConnectorState;
  trace: string | null;
  workerId: string;
  generation: number;
}

export interface TaskStatus {
  id: ConnectorTaskId;
  state: ConnectorState;
  trace: string | null;
  workerId: string;
  generation: number;
}

/** A topic a connector has used (KIP-558 active topics). */
export interface TopicStatus {
  topic: string;
  connector: string;
  task: number;
  discoverTimestamp: number;
}

export interface StatusBackingStore {
  start(): Promise<void>;
  stop(): Promise<void>;
  readToEnd(): Promise<void>;
  put(status: ConnectorStatus): Promise<void>;
  putSafe(status: ConnectorStatus): Promise<boolean>;
  putTask(status: TaskStatus): Promise<void>;
  putTaskSafe(status: TaskStatus): Promise<boolean>;
  putTopic(status: TopicStatus): Promise<void>;
  /** Removes the connector's status, its tasks' and its topics' (tombstones). */
  deleteConnector(connector: string): Promise<void>;
  deleteTopic(connector: string, topic: string): Promise<void>;
  get(connector: string): ConnectorStatus | undefined;
  getTask(id: ConnectorTaskId): TaskStatus | undefined;
  /** The connector's task statuses, by task number. */
  getAll(connector: string): TaskStatus[];
  getTopics(connector: string): TopicStatus[];
  /** Whether the connector's topic is recorded active (a lookup, for every task batch). */
  hasTopic(connector: string, topic: string): boolean;
  connectors(): string[];
}

/** Connect's rule for a fenced write: same worker, or a generation at least as new. */
export function canWriteSafely(
  current: { workerId: string; generation: number } | undefined,
  next: { workerId: string; generation: number },
): boolean {
  return (
    current === undefined ||
    current.workerId === next.workerId ||
    current.generation <= next.generation
  );
}
