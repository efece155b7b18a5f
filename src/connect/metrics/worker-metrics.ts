/**
 * connect-worker-metrics and connect-worker-rebalance-metrics: what the worker and
 * the distributed herder record. Counts of what runs now (connectors, tasks, tasks
 * by state) are not kept here: the worker gives a view read at scrape time.
 *
 * Called on the worker's event loop only.
 */
import type { Clock } from '../../util/clock.ts';
import { WindowedStat } from './windowed-stat.ts';

export interface WorkerView {
  connectorCount(): number;
  taskCount(): number;
}

/** Startup attempts, successes and failures of connectors and tasks on this worker. */
export class WorkerMetrics {
  connectorStartupAttempts = 0;
  connectorStartupSuccesses = 0;
  connectorStartupFailures = 0;
  taskStartupAttempts = 0;
  taskStartupSuccesses = 0;
  taskStartupFailures = 0;
  view: WorkerView = { connectorCount: () => 0, taskCount: () => 0 };

  /** A connector start settled: started (RUNNING, PAUSED or STOPPED as asked) or not. */
  recordConnectorStartup(ok: boolean): void {
    this.connectorStartupAttempts++;
    if (ok) this.connectorStartupSuccesses++;
    else this.connectorStartupFailures++;
  }

  /** A task start settled: started, or failed (a task stopped while starting is neither). */
  recordTaskStartup(ok: boolean | undefined): void {
    this.taskStartupAttempts++;
    if (ok === true) this.taskStartupSuccesses++;
    else if (ok === false) this.taskStartupFailures++;
  }
}

/**
 * A rebalance runs from the member's join (or the revocation before it) to the
 * assignment the herder applied; its time is that span. Kafka reports the time
 * since the last one as +Inf before any, and so does this.
 */
export class WorkerRebalanceMetrics {
  completedRebalances = 0;
  epoch = -1;
  leaderName = '';
  protocol = '';
  rebalancing = false;
  private startedAt = 0;
  private lastCompletedAt: number | null = null;
  readonly rebalanceTime: WindowedStat;

  constructor(private readonly clock: Clock) {
    this.rebalanceTime = new WindowedStat(clock);
  }

  /** The member is (re)joining; a second call during the same rebalance changes nothing. */
  rebalanceStarted(): void {
    if (this.rebalancing) return;
    this.rebalancing = true;
    this.startedAt = this.clock.now();
  }

  /** The herder applied the assignment of `generation`. */
  rebalanceCompleted(generation: number, leaderName: string, protocol: string): void {
    const now = this.clock.now();
    if (this.rebalancing) this.rebalanceTime.record(now - this.startedAt);
    this.rebalancing = false;
    this.completedRebalances++;
    this.epoch = generation;
    this.leaderName = leaderName;
    this.protocol = protocol;
    this.lastCompletedAt = now;
  }

  timeSinceLastRebalanceMs(): number {
    return this.lastCompletedAt === null
      ? Number.POSITIVE_INFINITY
      : this.clock.now() - this.lastCompletedAt;
  }
}
