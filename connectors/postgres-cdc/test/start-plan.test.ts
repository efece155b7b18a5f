import { describe, expect, it } from 'vitest';
import type { SnapshotMode } from '../src/connector-config.ts';
import { type ResumeCheck, SlotError } from '../src/replication-slot.ts';
import { parseStoredOffset, planStart } from '../src/start-plan.ts';

const slotOk = (lsn: number): ResumeCheck => ({ resumeFrom: lsn });
const slotGone = (): ResumeCheck => ({ error: new SlotError('slot-missing', 'slot gone') });
const streamed = parseStoredOffset({ lsn: 500, lsn_commit: 480, lsn_proc: 470, txId: 7 });
const interrupted = parseStoredOffset({ lsn: 100, snapshot: true, last_snapshot_record: false });
const snapshotDone = parseStoredOffset({ lsn: 100, snapshot: true, last_snapshot_record: true });

describe('start plan per snapshot.mode', () => {
  it.each<[SnapshotMode, string]>([
    ['initial', 'snapshot'],
    ['initial_only', 'snapshot'],
    ['always', 'snapshot'],
    ['when_needed', 'snapshot'],
    ['no_data', 'stream-from-slot'],
  ])('without a stored offset, %s plans %s', (mode, action) => {
    expect(planStart(mode, null, slotOk).action).toBe(action);
  });

  it('takes an interrupted snapshot again from scratch', () => {
    expect(planStart('initial', interrupted, slotOk)).toMatchObject({
      action: 'snapshot',
      thenStream: true,
    });
  });

  it('resumes a stored streaming position, skipping up to lsn_proc of its transaction', () => {
    expect(planStart('initial', streamed, slotOk)).toEqual({
      action: 'resume',
      startLsn: 500,
      resumeAfter: { commitLsn: 480, lsnProc: 470 },
      note: undefined,
    });
  });

  it('resumes after a finished snapshot at its consistent point with nothing to skip', () => {
    expect(planStart('initial', snapshotDone, slotOk)).toMatchObject({
      action: 'resume',
      startLsn: 100,
      resumeAfter: null,
    });
  });

  it('fails when the slot is gone, except under when_needed which snapshots again', () => {
    expect(planStart('initial', streamed, slotGone)).toMatchObject({ action: 'fail' });
    expect(planStart('no_data', streamed, slotGone)).toMatchObject({ action: 'fail' });
    expect(planStart('when_needed', streamed, slotGone)).toMatchObject({ action: 'snapshot' });
  });

  it('always snapshots under always; initial_only does nothing once its snapshot is done', () => {
    expect(planStart('always', streamed, slotOk).action).toBe('snapshot');
    expect(planStart('initial_only', snapshotDone, slotOk).action).toBe('idle');
    expect(planStart('initial_only', null, slotOk)).toMatchObject({ thenStream: false });
  });

  it('reads offsets whose numbers came back as strings or bigints', () => {
    expect(parseStoredOffset({ lsn: '500', lsn_commit: 480n, lsn_proc: '470' })).toEqual(streamed);
  });
});
