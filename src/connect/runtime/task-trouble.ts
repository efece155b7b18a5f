/**
 * A running task's trouble (SourceTaskContext / SinkTaskContext `reportTrouble`): a
 * detail saying the task is RUNNING but held up (retrying a lost connection, waiting
 * for a resource another process holds), published as the `trace` of its RUNNING
 * status so `GET /connectors/{name}/status` tells the truth.
 *
 * The runner reports its states through `listener`, which wraps the worker's
 * StatusListener, so the detail follows the task's state without each write of the
 * runner having to carry it:
 *   - before the first state (during task.start) a call only records the detail; the
 *     RUNNING the runner reports after start shows it;
 *   - every RUNNING carries the current detail (none once the task cleared it), and a
 *     change of detail while RUNNING writes RUNNING with the new one;
 *   - PAUSED keeps the detail without showing it (a PAUSED status has no trace, as in
 *     Kafka Connect) and the RUNNING of the resume shows it again: the trouble lies
 *     outside the task, and a source task is not told it was paused, so it has no
 *     reason to report it again;
 *   - any other state (FAILED, UNASSIGNED once stopped) ends it: later calls are
 *     ignored, so a task still settling after its stop or failure cannot turn that
 *     status back into RUNNING.
 * Repeating the current detail writes nothing; '' counts as null (Kafka Connect leaves
 * an empty trace out of status answers). A restarted task starts without a detail.
 *
 * Called on the worker's event loop only: by the task through its context and by the
 * runner's own status writes, never concurrently.
 */
import type { ConnectorState, ConnectorTaskId } from '../herder/herder.ts';
import type { StatusListener } from './status-listener.ts';

type Phase = 'starting' | 'running' | 'paused' | 'ended';

export class TaskTrouble {
  /** The worker's listener as the runner must use it: RUNNING states carry the detail. */
  readonly listener: StatusListener;
  private detail: string | null = null;
  private phase: Phase = 'starting';

  constructor(
    private readonly id: ConnectorTaskId,
    private readonly status: StatusListener,
  ) {
    this.listener = {
      connectorState: (connector, state, trace) => status.connectorState(connector, state, trace),
      taskState: (taskId, state, trace) => this.taskState(taskId, state, trace),
      connectorDeleted: (connector) => status.connectorDeleted?.(connector),
      topicUsed: (connector, topic) => status.topicUsed?.(connector, topic),
    };
  }

  /** The task's call: `detail` (null to clear) shown while it stays RUNNING. */
  report(detail: string | null): void {
    if (this.phase === 'ended') return;
    const next = typeof detail === 'string' && detail !== '' ? detail : null;
    if (next === this.detail) return;
    this.detail = next;
    if (this.phase === 'running') this.status.taskState(this.id, 'RUNNING', next ?? undefined);
  }

  private taskState(id: ConnectorTaskId, state: ConnectorState, trace?: string): void {
    const own = id.connector === this.id.connector && id.task === this.id.task;
    if (!own) {
      this.status.taskState(id, state, trace);
      return;
    }
    this.phase = state === 'RUNNING' ? 'running' : state === 'PAUSED' ? 'paused' : 'ended';
    const shown = state === 'RUNNING' ? (trace ?? this.detail ?? undefined) : trace;
    this.status.taskState(id, state, shown);
  }
}
