/**
 * The one loop that runs the log layer's background work (Kafka's KafkaScheduler
 * tasks of LogManager, plus the cleaner thread's loop):
 *
 *   retention       every log.retention.check.interval.ms  delete expired segments
 *   cleaner         every log.cleaner.backoff.ms           compact the dirtiest log
 *   flush           every log.flush.scheduler.interval.ms  flush.ms for each log
 *   checkpoint      every log.flush.offset.checkpoint.interval.ms  recovery points
 *
 * Decisions use the injected clock; the loop wakes on a real timer every `tickMs` and
 * runs what is due. Tests call `runDue()` after moving a ManualClock instead of
 * waiting. Tasks never overlap (one owner, one loop); `stop()` clears the timer and
 * waits for a run in progress. A failing task is logged and retried next period.
 */
import type { Clock } from '../../util/clock.ts';
import { getLogger, type Logger } from '../../util/logger.ts';

export interface ScheduledTask {
  name: string;
  intervalMs: number;
  run(): Promise<unknown> | unknown;
}

export class LogScheduler {
  private readonly nextRun = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly logger: Logger;

  constructor(
    private readonly clock: Clock,
    private readonly tasks: ScheduledTask[],
    private readonly tickMs = 1000,
    logger?: Logger,
  ) {
    this.logger = logger ?? getLogger('broker.log.scheduler');
    const now = clock.now();
    for (const t of tasks) this.nextRun.set(t.name, now + t.intervalMs);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runDue().finally(() => this.schedule());
    }, this.tickMs);
  }

  /** Runs every task whose time has come, one after another. */
  runDue(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      for (const task of this.tasks) {
        const now = this.clock.now();
        if (now < (this.nextRun.get(task.name) ?? 0)) continue;
        this.nextRun.set(task.name, now + task.intervalMs);
        try {
          await task.run();
        } catch (err) {
          this.logger.error({ err, task: task.name }, 'background log task failed');
        }
      }
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) await this.running;
  }
}
