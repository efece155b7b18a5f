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
 * existing slot of that name has to be dropped first. Streaming from a stored position
 * needs the slot that position belongs to (checkResume); when it is gone, only
 * when_needed (and always) may fall back to a new snapshot, every other mode fails
 * rather than silently skip the changes made meanwhile.
 *
 * Which existing slot may be dropped. Postgres records no owner for a slot, and a slot
 * name is one per server, so ownership is read from the stored offset: any offset of
 * this connector (a position, or an interrupted snapshot, which is written only after
 * the slot of that snapshot was created) says this connector has been running on this
 * slot name, and the connector's validate() keeps every other connector of the cluster
 * off it. Such a slot is replaced (`replaceSlot`), but only once no process holds it:
 * the task waits for a held one within slot.max.retries and never terminates the
 * holder. Without a stored offset an existing slot belongs to someone the task cannot
 * tell apart: another Connect cluster, a Debezium, pg_recvlogical, a slot made by hand,
 * or this connector before its first offset commit or after its offsets were reset.
 * Dropping it loses its reader's changes for good, which is what made two connectors
 * with one slot.name silently skip changes, so the plan refuses, naming the SQL that
 * drops it. Debezium instead reuses an existing slot in that case (it snapshots without
 * an exported snapshot and streams from the slot's position); that is not followed
 * here either: streaming confirms the slot, taking the changes from its other reader.
 * snapshot.mode=no_data means "stream from the slot as it is", so it may use one (as
 * may configuration_based without snapshot.data).
 */
import type { OffsetValue, SourceOffset } from '../../../src/connect/api/index.ts';
import type { ResumePoint } from './change-event-source.ts';
import type { SnapshotMode } from './connector-config.ts';
import type { Lsn } from './lsn.ts';
import { type ResumeCheck, SlotError } from './replication-slot.ts';
import { describeHolder, describeRetained, type SlotUsage } from './slot-usage.ts';
import { type ResumedTransaction, resumedTransaction } from './transaction-metadata.ts';

/** The slot of the configured name, as the plan needs to know it. */
export interface SlotView {
  name: string;
  /** null when no slot has that name. */
  usage: SlotUsage | null;
  /** Whether a stored offset LSN can be resumed from this slot. */
  checkResume(storedLsn: Lsn): ResumeCheck;
}

export type StoredPosition =
  | { kind: 'snapshot-interrupted' }
  | {
      kind: 'position';
      lsn: Lsn;
      lsnCommit: Lsn | null;
      lsnProc: Lsn | null;
      /** The counts of the transaction the offset stopped inside (transaction-metadata.ts). */
      transaction?: ResumedTransaction;
    };

export type StartPlan =
  /**
   * Create the slot exporting a snapshot and read the tables; when `replaceSlot`, the
   * existing slot (this connector's) is dropped first, once nothing holds it.
   */
  | { action: 'snapshot'; thenStream: boolean; replaceSlot: boolean; reason: string }
  /** Stream from the slot (created without snapshot if missing), from its confirmed position. */
  | { action: 'stream-from-slot'; reason: string }
  /** Stream from a stored position, skipping what was delivered before it. */
  | {
      action: 'resume';
      startLsn: Lsn;
      resumeAfter: ResumePoint | null;
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
  const position = {
    kind: 'position' as const,
    lsn,
    lsnCommit: num(offset.lsn_commit),
    lsnProc: num(offset.lsn_proc),
  };
  const transaction = resumedTransaction(offset);
  return transaction ? { ...position, transaction } : position;
}

/**
 * snapshot.mode=configuration_based's keys (snapshot.mode.configuration.based.*), as
 * Debezium's ConfigurationBasedSnapshotter reads them: snapshot.data snapshots at every
 * start, start.stream streams (after the snapshot, if any), snapshot.on.data.error
 * snapshots again when the stored position can no longer be streamed from. Postgres
 * keeps no schema history, so snapshot.schema and snapshot.on.schema.error change
 * nothing here (nor in Debezium's Postgres connector).
 */
export interface ConfigurationBasedSnapshot {
  snapshotData: boolean;
  stream: boolean;
  snapshotOnDataError: boolean;
}

const NOTHING: ConfigurationBasedSnapshot = {
  snapshotData: false,
  stream: false,
  snapshotOnDataError: false,
};

/** What a snapshot.mode does in each situation a start can meet. */
interface Policy {
  snapshotWithoutOffset: boolean;
  snapshotWhenInterrupted: boolean;
  snapshotWithOffset: boolean;
  snapshotWhenPositionLost: boolean;
  stream: boolean;
}

function policyOf(mode: SnapshotMode, cb: ConfigurationBasedSnapshot): Policy {
  const p = (first: boolean, every: boolean, lost: boolean, stream: boolean): Policy => ({
    snapshotWithoutOffset: first,
    snapshotWhenInterrupted: first,
    snapshotWithOffset: every,
    snapshotWhenPositionLost: lost,
    stream,
  });
  switch (mode) {
    case 'initial':
      return p(true, false, false, true);
    case 'initial_only':
      return p(true, false, false, false);
    case 'no_data':
      return p(false, false, false, true);
    case 'always':
      return p(true, true, false, true);
    case 'when_needed':
      return p(true, false, true, true);
    case 'configuration_based':
      return p(cb.snapshotData, cb.snapshotData, cb.snapshotOnDataError, cb.stream);
  }
}

export function planStart(
  mode: SnapshotMode,
  stored: StoredPosition | null,
  slot: SlotView,
  configurationBased: ConfigurationBasedSnapshot = NOTHING,
): StartPlan {
  const policy = policyOf(mode, configurationBased);
  const snapshot = (reason: string): StartPlan => ({
    action: 'snapshot',
    thenStream: policy.stream,
    replaceSlot: slot.usage !== null,
    reason,
  });
  const noSnapshot = (why: string): StartPlan =>
    policy.stream
      ? { action: 'stream-from-slot', reason: `${why}, snapshot.mode=${mode}` }
      : { action: 'idle', reason: `${why}, snapshot.mode=${mode} neither snapshots nor streams` };
  if (stored === null) {
    if (!policy.snapshotWithoutOffset) return noSnapshot('no stored offset');
    if (slot.usage !== null) return { action: 'fail', error: notOwnedError(slot.name, slot.usage) };
    return snapshot('no stored offset');
  }
  if (stored.kind === 'snapshot-interrupted') {
    if (!policy.snapshotWhenInterrupted) return noSnapshot('interrupted snapshot');
    return snapshot('the previous snapshot was interrupted');
  }
  if (policy.snapshotWithOffset) return snapshot(`snapshot.mode=${mode}`);
  if (!policy.stream)
    return {
      action: 'idle',
      reason:
        mode === 'initial_only'
          ? 'snapshot.mode=initial_only and the snapshot is done'
          : `snapshot.mode=${mode} does not stream`,
    };
  const check = slot.checkResume(stored.lsn);
  if ('error' in check) {
    if (policy.snapshotWhenPositionLost)
      return snapshot(`${check.error.message} (snapshot.mode=${mode})`);
    return { action: 'fail', error: check.error };
  }
  return {
    action: 'resume',
    startLsn: check.resumeFrom,
    resumeAfter:
      stored.lsnCommit !== null && stored.lsnProc !== null
        ? {
            commitLsn: stored.lsnCommit,
            lsnProc: stored.lsnProc,
            ...(stored.transaction ? { transaction: stored.transaction } : {}),
          }
        : null,
    note: check.note,
  };
}

function notOwnedError(name: string, usage: SlotUsage): SlotError {
  const state = usage.active
    ? `it is held by ${describeHolder(usage)}`
    : `it is inactive, ${describeRetained(usage)}`;
  const literal = `'${name.replaceAll("'", "''")}'`;
  return new SlotError(
    'slot-not-owned',
    `Replication slot '${name}' already exists but this connector has no stored offset, so the slot is ` +
      `not known to be its own (${state}). A snapshot would have to drop it, and with it the changes ` +
      'it keeps for whoever reads it. Give this connector its own slot.name; or, if nothing uses the ' +
      `slot any more, drop it with SELECT pg_drop_replication_slot(${literal}); or set ` +
      'snapshot.mode=no_data to stream from it without a snapshot',
  );
}
