/**
 * The process shutdown path. Components register as they start; on SIGINT or SIGTERM
 * (or a call to shutdown()) they are stopped one at a time in reverse start order, so
 * a thing is stopped before what it depends on (tasks before the worker's producer,
 * the worker before the embedded broker, which flushes its logs last).
 *
 * Invariants: each component's stop() is called at most once; a stop that throws is
 * logged and the others still stop (exit code 1); a shutdown that takes longer than
 * `timeoutMs` in total, or a second signal during shutdown, forces exit at once
 * through `forceExit` (exit code 1 and 130) naming the component still stopping.
 * Signal listeners are removed when shutdown completes, so nothing is left behind.
 *
 * Owned by the CLI (one per process); tests construct their own with an
 * EventEmitter as the signal source and a recording forceExit.
 */
import type { EventEmitter } from 'node:events';
import { getLogger, type Logger } from './logger.ts';

export interface ShutdownOptions {
  /** Total time allowed for every stop(); then forceExit(1). */
  timeoutMs?: number;
  /** Where SIGINT/SIGTERM come from (default: process). */
  signals?: EventEmitter;
  /** Ends the process without waiting; default process.exit. */
  forceExit?: (code: number) => void;
  logger?: Logger;
}

export type ShutdownReason = 'SIGINT' | 'SIGTERM' | 'requested';

/** Exit code when a second signal interrupts a graceful shutdown (128 + SIGINT, as shells do). */
export const FORCED_EXIT_CODE = 130;
export const TIMEOUT_EXIT_CODE = 1;

interface Registered {
  name: string;
  stop: () => Promise<void>;
}

export class Shutdown {
  private readonly components: Registered[] = [];
  private readonly timeoutMs: number;
  private readonly signals: EventEmitter;
  private readonly forceExit: (code: number) => void;
  private readonly log: Logger;
  private started: Promise<number> | undefined;
  private stopping: string | undefined;
  private resolveDone!: (code: number) => void;
  /** Resolves with the exit code once shutdown has completed. */
  readonly done: Promise<number>;
  private readonly onSignal = (signal: NodeJS.Signals) => this.handleSignal(signal);

  constructor(options: ShutdownOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.signals = options.signals ?? process;
    this.forceExit = options.forceExit ?? ((code) => process.exit(code));
    this.log = options.logger ?? getLogger('shutdown');
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** Listen for SIGINT and SIGTERM until shutdown completes. */
  installSignalHandlers(): void {
    this.signals.on('SIGINT', this.onSignal);
    this.signals.on('SIGTERM', this.onSignal);
  }

  /** Register a started component; it is stopped before everything registered earlier. */
  register(name: string, stop: () => Promise<void>): void {
    if (this.started) throw new Error(`cannot register ${name}: shutdown already started`);
    this.components.push({ name, stop });
  }

  get isShuttingDown(): boolean {
    return this.started !== undefined;
  }

  /** Stop everything (once); later calls return the same result. */
  shutdown(reason: ShutdownReason = 'requested'): Promise<number> {
    if (!this.started) {
      if (this.components.length > 0) this.log.info({ reason }, 'shutting down');
      this.started = this.stopAll();
    }
    return this.started;
  }

  private handleSignal(signal: NodeJS.Signals): void {
    if (this.started) {
      this.log.warn(
        { signal, stopping: this.stopping },
        `second ${signal} during shutdown: exiting now${this.stopping ? ` while ${this.stopping} is still stopping` : ''}`,
      );
      this.removeSignalHandlers();
      this.forceExit(FORCED_EXIT_CODE);
      return;
    }
    void this.shutdown(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
  }

  private async stopAll(): Promise<number> {
    const timer = setTimeout(() => {
      this.log.error(
        { stopping: this.stopping, timeoutMs: this.timeoutMs },
        `shutdown did not finish within ${this.timeoutMs} ms${this.stopping ? ` (${this.stopping} is still stopping)` : ''}: exiting now`,
      );
      this.removeSignalHandlers();
      this.forceExit(TIMEOUT_EXIT_CODE);
    }, this.timeoutMs);
    // The timer must not be what keeps a finished process alive.
    timer.unref();
    let code = 0;
    for (const component of [...this.components].reverse()) {
      this.stopping = component.name;
      try {
        await component.stop();
        this.log.info({ component: component.name }, 'stopped');
      } catch (e) {
        code = 1;
        this.log.error({ component: component.name, err: e }, 'stop failed');
      }
    }
    this.stopping = undefined;
    clearTimeout(timer);
    this.removeSignalHandlers();
    this.resolveDone(code);
    return code;
  }

  private removeSignalHandlers(): void {
    this.signals.off('SIGINT', this.onSignal);
    this.signals.off('SIGTERM', this.onSignal);
  }
}
