/**
 * The signal channels outside the replication stream (kafka, file), read in one loop
 * as Debezium's SignalProcessor reads them: every signal.poll.interval.ms, the first
 * read at once, each enabled channel in turn; each signal it returns is handed to
 * `handle` (the task's, which passes it to the same SignalProcessor the source channel
 * uses), then the channel's `handled()` is called, in the same synchronous step, so a
 * channel's position moves only with the signals it covers already acted on.
 *
 * A channel that cannot be read (the signal topic does not exist yet, the broker is
 * down, the file is unreadable) is logged at warn, once per distinct error until it
 * reads again, and tried again at the next interval: as in Debezium, signals of
 * these channels are not retried once handled, but a read that failed is.
 *
 * Owner: the task; started once streaming starts (incremental snapshots run while
 * streaming), stopped by stop(), which closes the channels (ending a pending read)
 * and waits for the loop.
 */
import { Wakeup } from '../../../../src/connect/api/index.ts';
import type { Logger } from '../logger.ts';
import type { SignalRecord } from './signal-table.ts';

export interface SignalChannelReader {
  /** kafka, file: what signal.enabled.channels calls it. */
  readonly name: string;
  read(): Promise<SignalRecord[]>;
  /** The signals the last read returned have been handled. */
  handled?(): void;
  close(): void;
}

export interface ExternalSignalsOptions {
  channels: readonly SignalChannelReader[];
  intervalMs: number;
  log: Logger;
  handle(signal: SignalRecord, channel: string): void;
}

export class ExternalSignals {
  private loop: Promise<void> | null = null;
  private stopping = false;
  private readonly wakeup = new Wakeup();
  /** The last error logged per channel, so a lasting one is logged once. */
  private readonly lastError = new Map<string, string>();

  constructor(private readonly o: ExternalSignalsOptions) {}

  start(): void {
    if (this.stopping) return;
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeup.wake();
    for (const c of this.o.channels) c.close();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      for (const channel of this.o.channels) {
        if (this.stopping) break;
        await this.readOnce(channel);
      }
      if (this.stopping) break;
      await this.wakeup.wait(this.o.intervalMs);
    }
  }

  private async readOnce(channel: SignalChannelReader): Promise<void> {
    let signals: SignalRecord[];
    try {
      signals = await channel.read();
    } catch (e) {
      if (this.stopping) return;
      const text = e instanceof Error ? e.message : String(e);
      if (this.lastError.get(channel.name) !== text) {
        this.lastError.set(channel.name, text);
        this.o.log.warn(
          { err: e },
          `${channel.name} signal channel cannot be read: ${text}; trying again every ${this.o.intervalMs} ms`,
        );
      }
      return;
    }
    if (this.lastError.delete(channel.name))
      this.o.log.info(`${channel.name} signal channel is read again`);
    if (this.stopping) return;
    for (const signal of signals) this.o.handle(signal, channel.name);
    channel.handled?.();
  }
}
