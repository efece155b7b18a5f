import { describe, expect, it } from 'vitest';
import type { SnapshotMode } from '../src/connector-config.ts';
import { SlotError } from '../src/replication-slot.ts';
import type { SlotUsage } from '../src/slot-usage.ts';
import { parseStoredOffset, planStart, type SlotView } from '../src/start-plan.ts';

const idle: SlotUsage = {
  active: false,
  holder: null,
  retainedBytes: 16_777_216,
  retainedPretty: '16 MB',
  lagBytes: 0,
};
const held: SlotUsage = {
  ...idle,
  active: true,
  holder: { pid: 4242, applicationName: 'pg_recvlogical', clientAddr: null },
};
/** A slot that exists (idle unless given) and accepts any stored LSN. */
const slotOk: SlotView = {
  name: 'debezium',
  usage: idle,
  checkResume: (lsn) => ({ resumeFrom: lsn }),
};
const slotGone: SlotView = {
  name: 'debezium',
  usage: null,
  checkResume: () => ({ error: new SlotError('slot-missing', 'slot gone') }),
};
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
  ])('without a stored offset or a slot, %s plans %s', (mode, action) => {
    expect(planStart(mode, null, slotGone).action).toBe(action);
  });

  it('takes an interrupted snapshot again from scratch, replacing the slot that snapshot made', () => {
    expect(planStart('initial', interrupted, slotOk)).toMatchObject({
      action: 'snapshot',
      thenStream: true,
      replaceSlot: true,
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
    expect(planStart('always', streamed, slotOk)).toMatchObject({
      action: 'snapshot',
      replaceSlot: true,
    });
    expect(planStart('initial_only', snapshotDone, slotOk).action).toBe('idle');
    expect(planStart('initial_only', null, slotGone)).toMatchObject({ thenStream: false });
  });

  it('reads offsets whose numbers came back as strings or bigints', () => {
    expect(parseStoredOffset({ lsn: '500', lsn_commit: 480n, lsn_proc: '470' })).toEqual(streamed);
  });
});

describe('start plan with a slot this connector did not create (no stored offset)', () => {
  it.each<SnapshotMode>(['initial', 'initial_only', 'always', 'when_needed'])(
    '%s refuses instead of dropping it, giving the SQL that would and the other ways out',
    (mode) => {
      const plan = planStart(mode, null, slotOk);
      expect(plan.action).toBe('fail');
      const error = (plan as { error: SlotError }).error;
      expect(error.kind).toBe('slot-not-owned');
      expect(error.message).toMatch(
        /^Replication slot 'debezium' already exists but this connector has no stored offset/,
      );
      expect(error.message).toMatch(/inactive, retained WAL 16 MB/);
      expect(error.message).toMatch(/own slot\.name/);
      expect(error.message).toContain("SELECT pg_drop_replication_slot('debezium')");
      expect(error.message).toMatch(/snapshot\.mode=no_data/);
    },
  );

  it('names the process that holds it', () => {
    const plan = planStart('initial', null, { ...slotOk, usage: held });
    expect((plan as { error: SlotError }).error.message).toMatch(
      /held by pid 4242 \(application_name 'pg_recvlogical'\)/,
    );
  });

  it('streams from it under no_data, which asks for exactly that', () => {
    expect(planStart('no_data', null, { ...slotOk, usage: held }).action).toBe('stream-from-slot');
  });
});

describe('start plan under snapshot.mode=configuration_based', () => {
  const cb = (snapshotData: boolean, stream: boolean, snapshotOnDataError = false) => ({
    snapshotData,
    stream,
    snapshotOnDataError,
  });

  it('snapshots at every start with snapshot.data, streaming after it only with start.stream', () => {
    for (const stored of [null, interrupted, streamed]) {
      expect(planStart('configuration_based', stored, slotGone, cb(true, true))).toMatchObject({
        action: 'snapshot',
        thenStream: true,
      });
      expect(planStart('configuration_based', stored, slotGone, cb(true, false))).toMatchObject({
        action: 'snapshot',
        thenStream: false,
      });
    }
  });

  it('without snapshot.data streams as no_data does: from the slot, or from the stored position', () => {
    expect(planStart('configuration_based', null, slotOk, cb(false, true)).action).toBe(
      'stream-from-slot',
    );
    expect(planStart('configuration_based', streamed, slotOk, cb(false, true))).toMatchObject({
      action: 'resume',
      startLsn: 500,
    });
  });

  it('does nothing when it neither snapshots nor streams (Debezium’s defaults)', () => {
    expect(planStart('configuration_based', null, slotGone).action).toBe('idle');
    expect(planStart('configuration_based', streamed, slotOk).action).toBe('idle');
  });

  it('snapshots again when the position is lost only with snapshot.on.data.error', () => {
    expect(planStart('configuration_based', streamed, slotGone, cb(false, true)).action).toBe(
      'fail',
    );
    expect(
      planStart('configuration_based', streamed, slotGone, cb(false, true, true)),
    ).toMatchObject({ action: 'snapshot', thenStream: true });
  });
});
