/**
 * Opening a partition directory: finishing or discarding interrupted cleaner swaps,
 * loading segments, and recovering everything after the recovery point.
 *
 * Files this expects in `<dataDir>/<topic>-<partition>/`:
 *   <base>.log / .index / .timeindex / .txnindex   segments (see segment.ts)
 *   <base>.log.cleaned                 a cleaner output not yet committed: deleted
 *   <base>.txnindex.swap               a cleaner's new aborted-transaction index,
 *                                      written before its .log.cleaned is renamed:
 *                                      deleted while that .log.cleaned exists
 *                                      (uncommitted), else it replaces the index of
 *                                      the swap's segments
 *   <base>.log.swap                    a committed cleaner output: it replaces every
 *                                      segment whose base offset lies in
 *                                      [base, last offset of the swap file], then is
 *                                      renamed to <base>.log and recovered in full
 *   log-state.json                     the checkpoint (see log-checkpoint.ts)
 * Index files without a .log and `.tmp` files are leftovers and are deleted.
 *
 * Recovery: segments before the checkpoint's segment are trusted (their indexes are
 * loaded and sanity-checked, and rebuilt by a full scan when missing or corrupt); the
 * checkpoint's segment is trusted up to the checkpointed position and scanned after
 * it; later segments are scanned in full. Scanning validates each batch (framing,
 * CRC-32C, increasing offsets) and truncates at the first bad byte, logging how many
 * bytes were cut and why. A zero-filled tail (a preallocated segment whose trim did
 * not happen or did not reach the disk) is the end of the log, cut without a warning.
 * A clean close checkpoints the end of the log, so a clean restart scans nothing.
 *
 * Called only by PartitionLog.open, before the log is visible to anyone.
 */
import { existsSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../util/logger.ts';
import { fsyncDir, writeFileAtomic } from './atomic-file.ts';
import type { LogCheckpoint } from './log-checkpoint.ts';
import { LogSegment, lastOffsetInFile, type SegmentConfig, segmentFileName } from './segment.ts';

export interface RecoveredLog {
  segments: LogSegment[];
  /** Bytes cut from torn or corrupt tails, over all segments. */
  truncatedBytes: number;
  /** Segments scanned batch by batch (0 after a clean close). */
  scannedSegments: number;
}

const SEGMENT_FILE = /^(\d{20})\.(log|index|timeindex|txnindex)$/;

export function recoverPartitionDir(
  dir: string,
  config: SegmentConfig,
  checkpoint: LogCheckpoint | undefined,
  logger: Logger,
): RecoveredLog {
  completeSwaps(dir, logger);
  const bases = new Set<number>();
  for (const name of readdirSync(dir)) {
    const m = SEGMENT_FILE.exec(name);
    if (m) {
      if (m[2] === 'log') bases.add(Number(m[1]));
    } else if (name.endsWith('.tmp') || name.endsWith('.deleted')) {
      unlinkSync(join(dir, name));
    }
  }
  for (const name of readdirSync(dir)) {
    const m = SEGMENT_FILE.exec(name);
    if (m && m[2] !== 'log' && !bases.has(Number(m[1]))) unlinkSync(join(dir, name));
  }
  const ordered = [...bases].sort((a, b) => a - b);
  const rp = checkpoint?.recoveryPoint;
  const segments: LogSegment[] = [];
  let truncatedBytes = 0;
  let scannedSegments = 0;
  let nextOffset = ordered[0] ?? 0;
  for (const base of ordered) {
    const segment = LogSegment.open(dir, base, config);
    let result: ReturnType<LogSegment['loadTrusted']>;
    if (rp && base < rp.segment) {
      result = segment.loadTrusted(segment.size, undefined);
    } else if (rp && base === rp.segment && rp.position <= segment.size) {
      result = segment.loadTrusted(rp.position, rp.offset);
      if (result.batches > 0 || result.truncatedBytes > 0) scannedSegments++;
    } else {
      result = segment.recover(0, Math.max(base, nextOffset));
      scannedSegments++;
    }
    if (result.rebuiltIndex) {
      logger.warn(
        { segment: base, problem: result.rebuiltIndex },
        'rebuilt the indexes of a segment',
      );
      scannedSegments++;
    }
    if (result.truncatedBytes > 0) {
      truncatedBytes += result.truncatedBytes;
      logger.warn(
        {
          segment: base,
          truncatedBytes: result.truncatedBytes,
          validBytes: segment.size,
          reason: result.reason?.reason,
          detail: result.reason?.message,
        },
        `truncated ${result.truncatedBytes} bytes of torn or corrupt log tail`,
      );
    }
    if (result.zeroTailBytes > 0) {
      logger.info(
        { segment: base, zeroTailBytes: result.zeroTailBytes, validBytes: segment.size },
        'cut the zero-filled (preallocated) tail of a segment',
      );
    }
    nextOffset = Math.max(nextOffset, segment.nextOffset);
    segments.push(segment);
  }
  return { segments, truncatedBytes, scannedSegments };
}

function completeSwaps(dir: string, logger: Logger): void {
  const names = readdirSync(dir);
  for (const name of names) {
    // An index swap belongs to the cleaner output of the same base: uncommitted while
    // that output is still `.log.cleaned`.
    const indexSwap = /^(\d{20})\.txnindex\.swap$/.exec(name);
    if (indexSwap && names.includes(segmentFileName(Number(indexSwap[1]), '.log.cleaned'))) {
      unlinkSync(join(dir, name));
    }
  }
  for (const name of names) {
    if (name.endsWith('.cleaned')) {
      unlinkSync(join(dir, name));
      logger.info({ file: name }, 'discarded an uncommitted cleaner output');
    }
  }
  const swaps = readdirSync(dir)
    .filter((n) => /^\d{20}\.log\.swap$/.test(n))
    .sort();
  for (const name of swaps) {
    const base = Number(name.slice(0, 20));
    const swapPath = join(dir, name);
    const last = lastOffsetInFile(swapPath, base);
    const newIndex = join(dir, segmentFileName(base, '.txnindex.swap'));
    if (existsSync(newIndex)) dropTxnIndexes(dir, base, Math.max(base, last));
    else mergeTxnIndexes(dir, base, Math.max(base, last));
    // Idempotent: a crash in here leaves the .swap in place and the next open redoes it.
    for (const other of readdirSync(dir)) {
      const m = SEGMENT_FILE.exec(other);
      if (m && m[2] !== 'txnindex' && Number(m[1]) >= base && Number(m[1]) <= Math.max(base, last))
        unlinkSync(join(dir, other));
    }
    renameSync(swapPath, join(dir, segmentFileName(base, '.log')));
    fsyncDir(dir);
    logger.info({ segment: base, lastOffset: last }, 'completed an interrupted cleaner swap');
  }
  // Committed index swaps: of the swaps just completed, or of one whose log was
  // renamed into place before the crash.
  for (const name of readdirSync(dir)) {
    const indexSwap = /^(\d{20})\.txnindex\.swap$/.exec(name);
    if (!indexSwap) continue;
    renameSync(join(dir, name), join(dir, segmentFileName(Number(indexSwap[1]), '.txnindex')));
    fsyncDir(dir);
    logger.info({ file: name }, "installed a cleaned segment's aborted-transaction index");
  }
}

/** A swap with a new index replaces segments [first, last]: their old indexes go. */
function dropTxnIndexes(dir: string, first: number, last: number): void {
  for (const n of readdirSync(dir)) {
    if (!/^\d{20}\.txnindex$/.test(n)) continue;
    const base = Number(n.slice(0, 20));
    if (base >= first && base <= last) unlinkSync(join(dir, n));
  }
}

/**
 * A swap replaces segments [first, last]: their aborted-transaction entries move to
 * the replacement's `.txnindex` (the first segment's name), in segment order, so a
 * crash in the middle of a swap loses none. Written atomically; idempotent.
 */
function mergeTxnIndexes(dir: string, first: number, last: number): void {
  const names = readdirSync(dir)
    .filter((n) => /^\d{20}\.txnindex$/.test(n))
    .filter((n) => Number(n.slice(0, 20)) >= first && Number(n.slice(0, 20)) <= last)
    .sort();
  if (names.length === 0) return;
  const target = segmentFileName(first, '.txnindex');
  if (names.length === 1 && names[0] === target) return;
  const merged = Buffer.concat(names.map((n) => readFileSync(join(dir, n))));
  writeFileAtomic(join(dir, target), merged);
  for (const n of names) if (n !== target) unlinkSync(join(dir, n));
}
