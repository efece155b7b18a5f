/**
 * Which compacted log to clean and when (Kafka's LogCleanerManager), and the state
 * kept per log between cleanings.
 *
 * State file `<partition dir>/cleaner-offset.json`, replaced atomically:
 *   { "version": 1, "firstDirtyOffset": n, "deleteHorizon": ms | null }
 * firstDirtyOffset: where the last cleaning's dirty range ended (records before it
 * are already compacted). deleteHorizon: the earliest tombstone horizon left by the
 * last cleaning (of tombstones and of deletable transaction markers), so the log is
 * cleaned again once it passes even if little new data arrived. A missing or unreadable file means "nothing is clean yet". A crash between
 * a swap and this file's update only makes the next cleaning redo work: cleaning is
 * idempotent.
 *
 * A log is eligible when its policy includes compact and its cleanable range is
 * non-empty and either its dirty ratio (dirty bytes / cleanable bytes) reaches
 * min.cleanable.dirty.ratio, its oldest dirty record is older than
 * max.compaction.lag.ms, or a delete horizon has passed. `cleanOnce` cleans the
 * dirtiest eligible log; the LogScheduler calls it, one cleaning at a time.
 */
import { join } from 'node:path';
import type { Clock } from '../../util/clock.ts';
import { getLogger, type Logger } from '../../util/logger.ts';
import { readJsonFile, writeFileAtomic } from './atomic-file.ts';
import { type CleanResult, cleanableRange, cleanLog } from './cleaner.ts';
import { OffsetMap } from './offset-map.ts';
import type { PartitionLog } from './partition-log.ts';

export const CLEANER_STATE_FILE = 'cleaner-offset.json';

interface CleanerState {
  firstDirtyOffset: number;
  deleteHorizon: number | undefined;
}

/**
 * Keys per cleaning pass: three quarters of 2^20, the most a table of 2^20 slots holds
 * at the map's maximum load, so the table never grows past 24 MB (48 MB, and 72 MB
 * while doubling, for a million). A dirty range with more keys is cleaned in several
 * passes, as Kafka does when its dedupe buffer is full.
 */
const DEFAULT_OFFSET_MAP_ENTRIES = 786_432;

export interface LogCleanerOptions {
  clock: Clock;
  /** Keys the offset map holds per cleaning (log.cleaner.dedupe.buffer.size's role). */
  offsetMapEntries?: number;
  /** The partition's last stable offset (producer state); cleaning stops below it. Default: the log end. */
  lastStableOffset?: (log: PartitionLog) => number;
  logger?: Logger;
}

export interface CleaningCandidate {
  log: PartitionLog;
  dirtyRatio: number;
  reason: 'dirty ratio' | 'max.compaction.lag.ms' | 'delete horizon';
}

export class LogCleaner {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly map: OffsetMap;
  private readonly lastStableOffset: (log: PartitionLog) => number;
  private readonly states = new WeakMap<PartitionLog, CleanerState>();

  constructor(options: LogCleanerOptions) {
    this.clock = options.clock;
    this.logger = options.logger ?? getLogger('broker.log.cleaner');
    this.map = new OffsetMap(options.offsetMapEntries ?? DEFAULT_OFFSET_MAP_ENTRIES);
    this.lastStableOffset = options.lastStableOffset ?? ((log) => log.logEndOffset);
  }

  private state(log: PartitionLog): CleanerState {
    let state = this.states.get(log);
    if (!state) {
      const raw = readJsonFile(join(log.dir, CLEANER_STATE_FILE)) as
        | Record<string, unknown>
        | undefined;
      state = {
        firstDirtyOffset: Number.isSafeInteger(raw?.firstDirtyOffset)
          ? (raw?.firstDirtyOffset as number)
          : 0,
        deleteHorizon: typeof raw?.deleteHorizon === 'number' ? raw.deleteHorizon : undefined,
      };
      this.states.set(log, state);
    }
    state.firstDirtyOffset = Math.max(state.firstDirtyOffset, log.logStartOffset);
    return state;
  }

  /** Why `log` should be cleaned now, or undefined. */
  candidate(log: PartitionLog): CleaningCandidate | undefined {
    if (!log.config.cleanupPolicy.compact) return undefined;
    const now = this.clock.now();
    const range = cleanableRange(log, now, this.lastStableOffset(log));
    if (range.segments.length === 0) return undefined;
    const state = this.state(log);
    let clean = 0;
    let dirty = 0;
    let oldestDirty = Number.POSITIVE_INFINITY;
    for (const s of range.segments) {
      if (s.nextOffset <= state.firstDirtyOffset) clean += s.size;
      else {
        dirty += s.size;
        oldestDirty = Math.min(oldestDirty, s.rollingBaseTime ?? now);
      }
    }
    const dirtyRatio = clean + dirty === 0 ? 0 : dirty / (clean + dirty);
    if (dirty > 0 && dirtyRatio >= log.config.minCleanableDirtyRatio) {
      return { log, dirtyRatio, reason: 'dirty ratio' };
    }
    if (dirty > 0 && now - oldestDirty > log.config.maxCompactionLagMs) {
      return { log, dirtyRatio, reason: 'max.compaction.lag.ms' };
    }
    if (state.deleteHorizon !== undefined && now >= state.deleteHorizon) {
      return { log, dirtyRatio, reason: 'delete horizon' };
    }
    return undefined;
  }

  /** Cleans the dirtiest eligible log among `logs`; undefined when none is eligible. */
  async cleanOnce(logs: Iterable<PartitionLog>): Promise<CleanResult | undefined> {
    let best: CleaningCandidate | undefined;
    for (const log of logs) {
      const c = this.candidate(log);
      if (c && (!best || c.dirtyRatio > best.dirtyRatio)) best = c;
    }
    if (!best) return undefined;
    return this.clean(best.log, best.reason);
  }

  /** Cleans `log` now, whatever its dirty ratio (tests, tools). */
  async clean(log: PartitionLog, reason = 'requested'): Promise<CleanResult> {
    const now = this.clock.now();
    const state = this.state(log);
    const range = cleanableRange(log, now, this.lastStableOffset(log));
    const result = await cleanLog(log, range, state.firstDirtyOffset, this.map, now);
    this.map.clear();
    state.firstDirtyOffset = Math.max(state.firstDirtyOffset, result.endOffset);
    state.deleteHorizon = result.earliestDeleteHorizon;
    writeFileAtomic(
      join(log.dir, CLEANER_STATE_FILE),
      `${JSON.stringify({ version: 1, firstDirtyOffset: state.firstDirtyOffset, deleteHorizon: state.deleteHorizon ?? null })}\n`,
    );
    this.logger.info(
      {
        topic: log.topic,
        partition: log.partition,
        reason,
        recordsRemoved: result.recordsRemoved,
        tombstonesRemoved: result.tombstonesRemoved,
        markersRemoved: result.markersRemoved,
        bytesBefore: result.bytesBefore,
        bytesAfter: result.bytesAfter,
        segmentsRewritten: result.segmentsRewritten,
      },
      'cleaned log',
    );
    return result;
  }
}
