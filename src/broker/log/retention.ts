/**
 * Which segments retention may delete, as Kafka decides it (UnifiedLog's
 * deleteRetentionMsBreachedSegments / deleteRetentionSizeBreachedSegments /
 * deleteLogStartOffsetBreachedSegments): always whole segments from the start of the
 * log, never the active (last) one.
 *
 * - time (cleanup.policy delete, retention.ms >= 0): a segment whose largest record
 *   timestamp is more than retention.ms before now;
 * - size (cleanup.policy delete, retention.bytes >= 0): oldest segments while the
 *   log would still be at least retention.bytes without them;
 * - log start offset (any policy): segments whose every offset is below it, i.e.
 *   whose successor starts at or below it (DeleteRecords).
 *
 * A pure function of the segment list, so the rule is tested without files.
 */

export interface RetentionSegment {
  baseOffset: number;
  size: number;
  maxTimestamp: number;
}

export interface RetentionPolicy {
  deletePolicy: boolean;
  retentionMs: number;
  retentionBytes: number;
}

export type RetentionReason = 'retention.ms' | 'retention.bytes' | 'log-start-offset';

/** Number of leading segments to delete and the rule that deleted the last of them. */
export function segmentsToDelete(
  segments: readonly RetentionSegment[],
  policy: RetentionPolicy,
  logStartOffset: number,
  now: number,
): { count: number; reason?: RetentionReason } {
  const deletable = segments.length - 1; // the active segment stays
  let count = 0;
  let reason: RetentionReason | undefined;
  while (count < deletable && segments[count + 1].baseOffset <= logStartOffset) {
    count++;
    reason = 'log-start-offset';
  }
  if (!policy.deletePolicy) return { count, reason };
  if (policy.retentionMs >= 0) {
    while (count < deletable && now - segments[count].maxTimestamp > policy.retentionMs) {
      count++;
      reason = 'retention.ms';
    }
  }
  if (policy.retentionBytes >= 0) {
    let excess = segments.reduce((sum, s) => sum + s.size, 0) - policy.retentionBytes;
    for (let i = 0; i < count; i++) excess -= segments[i].size;
    while (count < deletable && excess - segments[count].size >= 0) {
      excess -= segments[count].size;
      count++;
      reason = 'retention.bytes';
    }
  }
  return { count, reason };
}
