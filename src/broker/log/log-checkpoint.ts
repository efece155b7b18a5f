/**
 * The per-partition checkpoint file `log-state.json`, replaced atomically.
 *
 * Format (JSON, version 1):
 *   { "version": 1, "logStartOffset": n,
 *     "recoveryPoint": { "offset": n, "segment": base offset, "position": bytes } }
 * `recoveryPoint` says: every byte of segment `segment` before `position`, and every
 * segment with a smaller base offset, was fsynced and validated; `offset` is the
 * offset after the last batch before `position`. Recovery on open trusts all that and
 * scans only what follows. PartitionLog writes it on close (after a final fsync, so a
 * clean restart scans nothing), periodically from the scheduler, and before the
 * cleaner rewrites segments that the recovery point would otherwise point into.
 *
 * A missing or unreadable file means "trust nothing": every segment is recovered.
 */
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from './atomic-file.ts';

export const CHECKPOINT_FILE = 'log-state.json';

export interface RecoveryPoint {
  offset: number;
  segment: number;
  position: number;
}

export interface LogCheckpoint {
  logStartOffset: number;
  recoveryPoint: RecoveryPoint | undefined;
}

export function readCheckpoint(dir: string): LogCheckpoint | undefined {
  const raw = readJsonFile(join(dir, CHECKPOINT_FILE)) as Record<string, unknown> | undefined;
  if (raw?.version !== 1 || !Number.isSafeInteger(raw.logStartOffset)) return undefined;
  const rp = raw.recoveryPoint as Record<string, unknown> | undefined;
  const valid =
    rp &&
    Number.isSafeInteger(rp.offset) &&
    Number.isSafeInteger(rp.segment) &&
    Number.isSafeInteger(rp.position);
  return {
    logStartOffset: raw.logStartOffset as number,
    recoveryPoint: valid ? (rp as unknown as RecoveryPoint) : undefined,
  };
}

/** The file's text for `checkpoint`; equal texts mean equal checkpoints. */
export function checkpointText(checkpoint: LogCheckpoint): string {
  const rp = checkpoint.recoveryPoint;
  // Fixed key order, so a checkpoint read back and one computed compare as text.
  const recoveryPoint = rp && { offset: rp.offset, segment: rp.segment, position: rp.position };
  return `${JSON.stringify({ version: 1, logStartOffset: checkpoint.logStartOffset, recoveryPoint })}\n`;
}

/**
 * Replaces the file with `checkpoint` unless `onDisk` (the text last read or written)
 * already says the same: an unchanged partition costs no write and no fsync. An idle
 * broker's shutdown wrote and fsynced every partition's file (two fsyncs each, some
 * hundred partitions with the internal topics), which took seconds on a slow disk.
 * Returns the text now on disk.
 */
export function writeCheckpoint(dir: string, checkpoint: LogCheckpoint, onDisk?: string): string {
  const text = checkpointText(checkpoint);
  if (text !== onDisk) writeFileAtomic(join(dir, CHECKPOINT_FILE), text);
  return text;
}
