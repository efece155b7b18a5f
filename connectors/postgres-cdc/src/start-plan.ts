/**
 * What a task does when it starts: snapshot, stream, or neither, decided from
 * `snapshot.mode`, the offset the runtime stored last, and the replication slot.
 *
 * Stored offsets come in three shapes (see change-event-source.ts and
 * snapshot-reader.ts for who writes them):
 *   none                      never started, or offsets were reset
 *   snapshot, not finished    { snapshot: true } without last_snapshot_record: a crash
 *                             interrupted the snapshot; it is taken again from scratch
 *   position                  the last snapshot row, a streamed change or a heartbeat:
 *                             { lsn, lsn_commit?, lsn_proc? }
 *
 * A snapshot always comes with a new slot created in the same step (its exported
 * snapshot is what makes snapshot and stream meet with no gap or overlap), so an
 * existing slot of that name is dropped first. Streaming from a stored position needs
 * the slot that position belongs to (checkResume); when it is gone, only when_needed
 * (and always) may fall back to a new snapshot, every other mode fails rather than
 * silently skip the changes made meanwhile.
 */
import type { OffsetValue, SourceOffset } from '../../../src/connect/api/index.ts';
import type { SnapshotMode } from './connector-config.ts';
import type { Lsn } from './lsn.ts';
import type { ResumeCheck, SlotError } from './replication-slot.ts';

export type StoredPosition =
  | { kind: 'snapshot-interrupted' }
  | { kind: 'position'; lsn: Lsn; lsnCommit: Lsn | null; lsnProc: Lsn | null };

export type StartPlan =
  /** Drop the slot if it exists, create it exporting a snapshot, read the tables. */
  | { action: 'snapshot'; thenStream: boolean; reason: string }
  /** Stream from the slot (created without snapshot if missing), from its confirmed position. */
  | { action: 'stream-from-slot'; reason: string }
  /** Stream from a stored position, skipping what was delivered before it. */
  | {
      action: 'resume';
      startLsn: Lsn;
      resumeAfter: { commitLsn: Lsn; lsnProc: Lsn } | null;
      note?: string;
    }
  /** initial_only after its snapshot: nothing left to do. */
  | { action: 'idle'; reason: string }
  | { action: 'fail'; error: SlotError };

function num(v: OffsetValue | undefined): number | null {
  if (v === undefined || v === null || v === '') return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

/** Read a stored offset; values may come back as numbers, bigints or strings. */
export function parseStoredOffset(offset: SourceOffset | null): StoredPosition | null {
  if (!offset) return null;
  const snapshot = offset.snapshot === true || offset.snapshot === 'true';
  const last = offset.last_snapshot_record === true || offset.last_snapshot_record === 'true';
  if (snapshot && !last) return { kind: 'snapshot-interrupted' };
  const lsn = num(offset.lsn);
  if (lsn === null) return null;
  return {
    kind: 'position',
    lsn,
    lsnCommit: num(offset.lsn_commit),
    lsnProc: num(offset.lsn_proc),
  };
}

export function planStart(
  mode: SnapshotMode,
  stored: StoredPosition | null,
  checkSlot: (storedLsn: Lsn) => ResumeCheck,
): StartPlan {
  const snapshot = (reason: string): StartPlan => ({
    action: 'snapshot',
    thenStream: mode !== 'initial_only',
    reason,
  });
  if (stored === null) {
    if (mode === 'no_data')
      return { action: 'stream-from-slot', reason: 'no stored offset, snapshot.mode=no_data' };
    return snapshot('no stored offset');
  }
  if (stored.kind === 'snapshot-interrupted') {
    if (mode === 'no_data')
      return { action: 'stream-from-slot', reason: 'interrupted snapshot, snapshot.mode=no_data' };
    return snapshot('the previous snapshot was interrupted');
  }
  if (mode === 'always') return snapshot('snapshot.mode=always');
  if (mode === 'initial_only')
    return { action: 'idle', reason: 'snapshot.mode=initial_only and the snapshot is done' };
  const check = checkSlot(stored.lsn);
  if ('error' in check) {
    if (mode === 'when_needed')
      return snapshot(`${check.error.message} (snapshot.mode=when_needed)`);
    return { action: 'fail', error: check.error };
  }
  return {
    action: 'resume',
    startLsn: check.resumeFrom,
    resumeAfter:
      stored.lsnCommit !== null && stored.lsnProc !== null
        ? { commitLsn: stored.lsnCommit, lsnProc: stored.lsnProc }
        : null,
    note: check.note,
  };
}
