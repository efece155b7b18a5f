/**
 * Signals, by type, as Debezium's SignalProcessor dispatches them:
 *   log                    logs data.message at INFO ("{}" in it becomes the offset of
 *                          the signal's place in the stream, as Debezium's slf4j call does)
 *   execute-snapshot       data { data-collections, type, additional-conditions }:
 *                          type incremental (the default) starts or extends an incremental
 *                          snapshot; type blocking pauses the stream for a blocking snapshot
 *                          (blocking-snapshot.ts), refused (logged, nothing runs) without one
 *   stop-snapshot          data { data-collections?, type }: drops those (all when none)
 *   pause-snapshot / resume-snapshot
 *   snapshot-window-open / snapshot-window-close
 *                          the incremental snapshot's own watermarks
 * An unknown type is logged and ignored, with Debezium's warning; data that is not a
 * JSON object likewise. Signals are handled synchronously at their place in the
 * stream: the records a window close releases are returned, to go out right there.
 *
 * Called from the change event source's loop only (event loop, no I/O of its own).
 */
import type { SourceOffset, SourceRecord } from '../../../../src/connect/api/index.ts';
import type { BlockingSnapshotSignals } from '../blocking-snapshot.ts';
import type { Logger } from '../logger.ts';
import type { SignalRecord } from './signal-table.ts';

/** Where a signal sits in the stream: what the records it releases are stamped with. */
export interface SignalPosition {
  offset: SourceOffset;
  lsn: number;
  txId: number | null;
  commitTimeMicros: number;
  /** The signal's transaction's counts before it (provide.transaction.metadata). */
  counts?: SourceOffset | null;
}

/** What the incremental snapshot offers the signals (incremental-snapshot.ts). */
export interface SnapshotSignals {
  execute(request: ExecuteSnapshotRequest): void;
  stopSnapshot(dataCollections: string[]): void;
  pause(): void;
  resume(): void;
  openWindow(chunkId: string): void;
  closeWindow(chunkId: string, at: SignalPosition): SourceRecord[];
}

export interface ExecuteSnapshotRequest {
  signalId: string;
  /** Regular expressions of schema.table names, matched whole. */
  dataCollections: string[];
  /** Extra WHERE conditions per data collection (schema.table, matched whole). */
  additionalConditions: Array<{ dataCollection: string; filter: string }>;
}

export const WINDOW_OPEN = 'snapshot-window-open';
export const WINDOW_CLOSE = 'snapshot-window-close';

export class SignalProcessor {
  constructor(
    private readonly log: Logger,
    private readonly snapshot: SnapshotSignals,
    private readonly blocking: BlockingSnapshotSignals | null = null,
  ) {}

  process(signal: SignalRecord, at: SignalPosition): SourceRecord[] {
    this.log.debug(
      `Received signal id = '${signal.id}', type = '${signal.type}', data = '${signal.data}'`,
    );
    const data = parseData(signal.data);
    if (data === null) {
      this.log.warn(
        `Signal '${signal.id}' has been received but the data '${signal.data}' cannot be parsed`,
      );
      return [];
    }
    switch (signal.type) {
      case 'log':
        this.logMessage(signal, data, at);
        return [];
      case 'execute-snapshot':
        this.execute(signal, data, at);
        return [];
      case 'stop-snapshot':
        this.snapshot.stopSnapshot(strings(data['data-collections']));
        return [];
      case 'pause-snapshot':
        this.snapshot.pause();
        return [];
      case 'resume-snapshot':
        this.snapshot.resume();
        return [];
      case WINDOW_OPEN:
        this.snapshot.openWindow(chunkIdOf(signal.id, '-open'));
        return [];
      case WINDOW_CLOSE:
        return this.snapshot.closeWindow(chunkIdOf(signal.id, '-close'), at);
      default:
        this.log.warn(
          `Signal '${signal.id}' has been received but the type '${signal.type}' is not recognized`,
        );
        return [];
    }
  }

  private logMessage(signal: SignalRecord, data: Record<string, unknown>, at: SignalPosition) {
    const message = data.message;
    if (typeof message !== 'string' || message === '') {
      this.log.warn(
        `Logging signal '${signal.id}' has arrived but the requested field 'message' is missing from data`,
      );
      return;
    }
    this.log.info(message.replace('{}', JSON.stringify(at.offset)));
  }

  private execute(signal: SignalRecord, data: Record<string, unknown>, at: SignalPosition): void {
    const type = typeof data.type === 'string' ? data.type.toLowerCase() : 'incremental';
    const dataCollections = strings(data['data-collections']);
    if (type !== 'incremental' && (type !== 'blocking' || this.blocking === null)) {
      this.log.error(
        `not supported: execute-snapshot signal '${signal.id}' of type '${type}'; only incremental${this.blocking ? ' and blocking' : ''} snapshots run, nothing was done`,
      );
      return;
    }
    if (dataCollections.length === 0) {
      this.log.warn(
        `Execute snapshot signal '${signal.id}' has arrived but the requested field 'data-collections' is missing from data or is empty`,
      );
      return;
    }
    const request = {
      signalId: signal.id,
      dataCollections,
      additionalConditions: conditions(data['additional-conditions']),
    };
    if (type === 'blocking') this.blocking?.executeBlocking(request, at);
    else this.snapshot.execute(request);
  }
}

function parseData(text: string | null): Record<string, unknown> | null {
  if (text === null || text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function conditions(v: unknown): ExecuteSnapshotRequest['additionalConditions'] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((c) => {
    const dataCollection = (c as Record<string, unknown> | null)?.['data-collection'];
    const filter = (c as Record<string, unknown> | null)?.filter;
    return typeof dataCollection === 'string' && typeof filter === 'string'
      ? [{ dataCollection, filter }]
      : [];
  });
}

/** Debezium's watermark ids are `<chunk id>-open` and `<chunk id>-close`. */
function chunkIdOf(signalId: string, suffix: string): string {
  return signalId.endsWith(suffix) ? signalId.slice(0, -suffix.length) : signalId;
}
