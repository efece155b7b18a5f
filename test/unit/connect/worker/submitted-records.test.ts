import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SubmittedRecords } from '../../../../src/connect/runtime/submitted-records.ts';

const fileA = { filename: 'a.txt' };
const fileB = { filename: 'b.txt' };

describe('SubmittedRecords', () => {
  it('commits nothing for a partition whose first record is unacknowledged', () => {
    const s = new SubmittedRecords('conn');
    s.submit(fileA, { position: 1 });
    const second = s.submit(fileA, { position: 2 });
    s.ack(second);
    const c = s.committableOffsets();
    expect(c.offsets.size).toBe(0);
    expect(c.uncommitted).toBe(2);
  });

  it('commits in submission order once records acknowledged out of order close the gap', () => {
    const s = new SubmittedRecords('conn');
    const r = [1, 2, 3, 4].map((position) => s.submit(fileA, { position }));
    s.ack(r[2]!);
    s.ack(r[1]!);
    expect(s.committableOffsets().offsets.size).toBe(0);
    s.ack(r[0]!);
    const c = s.committableOffsets();
    expect([...c.offsets.values()].map((e) => e.offset)).toEqual([{ position: 3 }]);
    expect(c.committed).toBe(3);
    expect(c.uncommitted).toBe(1);
  });

  it('tracks source partitions independently', () => {
    const s = new SubmittedRecords('conn');
    const a1 = s.submit(fileA, { position: 10 });
    s.submit(fileB, { position: 20 });
    s.ack(a1);
    const c = s.committableOffsets();
    expect([...c.offsets.values()]).toEqual([{ partition: fileA, offset: { position: 10 } }]);
    expect(c.largestQueue).toEqual({ partition: fileB, size: 1 });
  });

  it('never commits past the first unacknowledged record, whatever the acknowledgement order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 40 }),
        fc.func(fc.boolean()),
        fc.infiniteStream(fc.nat()),
        (partitionsOf, acked, order) => {
          const s = new SubmittedRecords('conn');
          const records = partitionsOf.map((p, i) => ({
            p,
            i,
            r: s.submit({ part: p }, { seq: i }),
          }));
          const chosen = records.filter((x) => acked(x.i));
          // Acknowledge the chosen records in a random order.
          const shuffled = [...chosen];
          const it = order[Symbol.iterator]();
          for (let k = shuffled.length - 1; k > 0; k--) {
            const j = (it.next().value as number) % (k + 1);
            [shuffled[k], shuffled[j]] = [shuffled[j]!, shuffled[k]!];
          }
          for (const x of shuffled) s.ack(x.r);
          const committed = new Map(
            [...s.committableOffsets().offsets.values()].map((e) => [
              e.partition.part,
              e.offset.seq,
            ]),
          );
          for (const p of [0, 1, 2]) {
            const mine = records.filter((x) => x.p === p);
            let prefix = 0;
            while (prefix < mine.length && acked(mine[prefix]!.i)) prefix++;
            const expected = prefix === 0 ? undefined : mine[prefix - 1]!.i;
            expect(committed.get(p)).toBe(expected);
          }
        },
      ),
    );
  });

  it('reports when every record is acknowledged', async () => {
    const s = new SubmittedRecords('conn');
    const r = s.submit(fileA, { position: 1 });
    const waiting = s.awaitAllAcknowledged(60_000);
    s.ack(r);
    await expect(waiting).resolves.toBe(true);
    expect(s.unacknowledged).toBe(0);
  });

  it('lets an unsent last record be removed so it does not block its partition', () => {
    const s = new SubmittedRecords('conn');
    const first = s.submit(fileA, { position: 1 });
    const last = s.submit(fileA, { position: 2 });
    expect(s.remove(first)).toBe(false);
    expect(s.remove(last)).toBe(true);
    s.ack(first);
    expect([...s.committableOffsets().offsets.values()][0]?.offset).toEqual({ position: 1 });
  });

  it('answers as a plain queue per partition would, across interleaved submits, acks, removals and commits', () => {
    // The model: every record kept until committableOffsets() takes the acknowledged
    // prefix (what the class did before it collapsed prefixes as acks arrived).
    type Op =
      | { op: 'submit'; part: number }
      | { op: 'ack'; pick: number }
      | { op: 'remove'; pick: number }
      | { op: 'take' };
    const op = fc.oneof(
      fc.record({ op: fc.constant('submit' as const), part: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ op: fc.constant('ack' as const), pick: fc.nat() }),
      fc.record({ op: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ op: fc.constant('take' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops: Op[]) => {
        const s = new SubmittedRecords('conn');
        const model = new Map<number, Array<{ seq: number; acked: boolean }>>();
        const live: Array<{ part: number; seq: number; r: ReturnType<typeof s.submit> }> = [];
        let seq = 0;
        for (const o of ops) {
          if (o.op === 'submit') {
            const r = s.submit({ part: o.part }, { seq });
            live.push({ part: o.part, seq, r });
            const q = model.get(o.part) ?? [];
            q.push({ seq, acked: false });
            model.set(o.part, q);
            seq++;
          } else if (o.op === 'ack' && live.length > 0) {
            const x = live[o.pick % live.length]!;
            s.ack(x.r);
            const m = model.get(x.part)?.find((e) => e.seq === x.seq);
            if (m) m.acked = true;
          } else if (o.op === 'remove' && live.length > 0) {
            const x = live[o.pick % live.length]!;
            const q = model.get(x.part) ?? [];
            const removable = q.length > 0 && q[q.length - 1]!.seq === x.seq && !x.r.acked;
            const removed = s.remove(x.r);
            expect(removed).toBe(removable);
            if (removed) {
              q.pop();
              live.splice(live.indexOf(x), 1);
            }
          } else if (o.op === 'take') {
            const c = s.committableOffsets();
            const expected = new Map<number, number>();
            let committed = 0;
            let uncommitted = 0;
            for (const [part, q] of model) {
              let n = 0;
              while (n < q.length && q[n]!.acked) n++;
              if (n > 0) expected.set(part, q[n - 1]!.seq);
              committed += n;
              q.splice(0, n);
              uncommitted += q.length;
            }
            const got = new Map(
              [...c.offsets.values()].map((e) => [
                e.partition.part as number,
                e.offset.seq as number,
              ]),
            );
            expect(got).toEqual(expected);
            expect(c.committed).toBe(committed);
            expect(c.uncommitted).toBe(uncommitted);
          }
        }
        const unacked = [...model.values()].flat().filter((e) => !e.acked).length;
        expect(s.unacknowledged).toBe(unacked);
      }),
      { numRuns: 500 },
    );
  });
});
