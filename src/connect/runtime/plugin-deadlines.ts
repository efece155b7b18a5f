/**
 * Deadlines on calls into plugin code (DESIGN.md: one plugin never stops the worker).
 * A connector's or a task's start, stop or deleted may wait on an external system
 * forever (a `mkdir` on a dead mount, a replication slot another process holds), and
 * JavaScript cannot cancel a pending promise. So the runtime waits for such a call at
 * most its deadline, then abandons it: the caller goes on (the item is marked FAILED,
 * a stop is logged as abandoned) while the call may still settle later.
 *
 * Two tools:
 *   PluginCalls  the calls on one plugin instance, made one at a time in order (the
 *                API promises calls never overlap): a call queued behind an abandoned
 *                one begins only once that one settled, however late, and its caller
 *                waits for it at most its own deadline.
 *   StatusGate   the StatusListener an instance reports through; the worker closes it
 *                when it abandons the instance, so a late result (a start that returns
 *                after its deadline, an UNASSIGNED after an abandoned stop) never
 *                overwrites the FAILED state or the state of a newer instance.
 * Timers are injected, so tests move time instead of waiting for deadlines.
 */
import type { Timers } from '../../util/timers.ts';
import type { ConnectorState, ConnectorTaskId, StatusListener } from './status-listener.ts';

export type CallOutcome<T> =
  | { kind: 'done'; value: T }
  | { kind: 'failed'; error: unknown }
  /**
   * Still running at its deadline ('late') or when the caller gave up waiting
   * ('interrupted', e.g. the instance is being stopped). `settled` resolves once the
   * call ends: true if it returned, false if it threw.
   */
  | { kind: 'late' | 'interrupted'; settled: Promise<boolean> };

/** Resolves true if `work` settles within `ms`, false at the deadline (work goes on). */
export function settlesWithin(
  work: Promise<unknown>,
  ms: number,
  timers: Timers,
): Promise<boolean> {
  return new Promise((resolve) => {
    const cancel = timers.schedule(ms, () => resolve(false));
    const done = () => {
      cancel();
      resolve(true);
    };
    work.then(done, done);
  });
}

export class PluginCalls {
  private tail: Promise<unknown> = Promise.resolve();
  private outstanding = 0;

  constructor(private readonly timers: Timers) {}

  /** Whether a call is running or queued (an abandoned call counts until it settles). */
  get busy(): boolean {
    return this.outstanding > 0;
  }

  /**
   * Make `call` once every earlier call settled, with nobody waiting for it (the work
   * of an abandoned instance, e.g. stopping it once a hung start returns). Resolves
   * true if it returned, false if it threw; never rejects.
   */
  queue(call: () => Promise<unknown> | unknown): Promise<boolean> {
    this.outstanding++;
    const settled = this.tail
      .then(() => call())
      .then(
        () => true,
        () => false,
      );
    this.tail = settled.finally(() => {
      this.outstanding--;
    });
    return settled;
  }

  /**
   * Make `call` once every earlier call settled; wait for it at most `deadlineMs`, or
   * until `interrupt` aborts. Never rejects: a throw is the 'failed' outcome.
   */
  run<T>(
    call: () => Promise<T> | T,
    deadlineMs: number,
    interrupt?: AbortSignal,
  ): Promise<CallOutcome<T>> {
    this.outstanding++;
    const result = this.tail.then(() => call());
    const settled = result.then(
      () => true,
      () => false,
    );
    this.tail = settled.finally(() => {
      this.outstanding--;
    });
    return new Promise((resolve) => {
      const finish = (outcome: CallOutcome<T>) => {
        cancel();
        interrupt?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = () => finish({ kind: 'interrupted', settled });
      const cancel = this.timers.schedule(deadlineMs, () => finish({ kind: 'late', settled }));
      if (interrupt?.aborted) onAbort();
      else interrupt?.addEventListener('abort', onAbort, { once: true });
      result.then(
        (value) => finish({ kind: 'done', value }),
        (error: unknown) => finish({ kind: 'failed', error }),
      );
    });
  }
}

/** A StatusListener that forwards until closed, then drops everything. */
export class StatusGate implements StatusListener {
  private open = true;

  constructor(private readonly status: StatusListener) {}

  /** Later reports of this instance are dropped (it was abandoned or is done). */
  close(): void {
    this.open = false;
  }

  get isOpen(): boolean {
    return this.open;
  }

  connectorState(connector: string, state: ConnectorState, trace?: string): void {
    if (this.open) this.status.connectorState(connector, state, trace);
  }

  taskState(id: ConnectorTaskId, state: ConnectorState, trace?: string): void {
    if (this.open) this.status.taskState(id, state, trace);
  }

  connectorDeleted(connector: string): void {
    if (this.open) this.status.connectorDeleted?.(connector);
  }

  topicUsed(connector: string, topic: string): void {
    if (this.open) this.status.topicUsed?.(connector, topic);
  }
}
