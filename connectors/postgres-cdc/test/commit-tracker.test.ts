import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { CommitTracker } from '../src/commit-tracker.ts';
import type { StoredPosition } from '../src/start-plan.ts';

const rec = (commit: number, proc: number): SourceRecord => ({
  topic: 't',
  sourcePartition: { server: 's' },
  sourceOffset: { lsn: proc, lsn_commit: commit, lsn_proc: proc },
});
const at = (r: SourceRecord): StoredPosition => ({
  kind: 'position',
  lsn: r.sourceOffset.lsn as number,
  lsnCommit: r.sourceOffset.lsn_commit as number,
  lsnProc: r.sourceOffset.lsn_proc as number,
});
const tx = (commitLsn: number, endLsn: number, records = 1) => ({
  xid: 1,
  commitLsn,
  endLsn,
  records,
});

describe('commit tracker', () => {
  it('confirms nothing before the records are acknowledged and stored', () => {
    const t = new CommitTracker();
    const a = rec(100, 90);
    t.emitted([a]);
    t.committed(tx(100, 110));
    expect(t.takeConfirmable(at(a))).toBeNull();
    t.acknowledged(a);
    expect(t.takeConfirmable(null)).toBeNull();
    expect(t.takeConfirmable(at(a))).toBe(110);
    expect(t.pending).toBe(0);
  });

  it('stops at the first transaction the stored offset does not cover fully', () => {
    const t = new CommitTracker();
    const a = rec(100, 90);
    const b1 = rec(200, 150);
    const b2 = rec(200, 160);
    t.emitted([a]);
    t.committed(tx(100, 110));
    t.emitted([b1, b2]);
    t.committed(tx(200, 210));
    for (const r of [a, b1, b2]) t.acknowledged(r);
    expect(t.takeConfirmable(at(b1))).toBe(110);
    expect(t.takeConfirmable(at(b2))).toBe(210);
  });

  it('confirms transactions without captured records once everything before them is', () => {
    const t = new CommitTracker();
    const a = rec(100, 90);
    t.emitted([a]);
    t.committed(tx(100, 110));
    t.committed(tx(300, 310, 0));
    expect(t.takeConfirmable(null)).toBeNull();
    t.acknowledged(a);
    expect(t.takeConfirmable(at(a))).toBe(310);
  });

  it('does not confirm an open transaction, and ignores commits Postgres re-sends after a reconnect', () => {
    const t = new CommitTracker();
    const a = rec(100, 90);
    t.emitted([a]);
    t.acknowledged(a);
    expect(t.takeConfirmable(at(a))).toBeNull();
    t.committed(tx(100, 110));
    expect(t.takeConfirmable(at(a))).toBe(110);
    t.committed(tx(100, 110));
    expect(t.pending).toBe(0);
  });
});
