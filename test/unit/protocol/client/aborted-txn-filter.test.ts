import { describe, expect, it } from 'vitest';
import { AbortedTransactionFilter } from '../../../../src/protocol/client/aborted-transactions.ts';
import { encodeMarkerBatch } from '../../../../src/protocol/control-record.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';

/** A partition's log as a Fetch answer carries it: batches back to back from `baseOffset`. */
function log(
  entries: Array<{ producerId: number; kind: 'data' | 'plain' | 'commit' | 'abort'; n?: number }>,
) {
  const batches: Buffer[] = [];
  const kinds: string[] = [];
  let offset = 0;
  for (const e of entries) {
    const n = e.n ?? 1;
    const batch =
      e.kind === 'commit' || e.kind === 'abort'
        ? encodeMarkerBatch({
            producerId: e.producerId,
            producerEpoch: 0,
            commit: e.kind === 'commit',
            coordinatorEpoch: 0,
            timestamp: 0,
          })
        : encodeBatch({
            records: Array.from({ length: n }, () => ({
              timestamp: 0,
              key: null,
              value: Buffer.from('v'),
            })),
            producerId: e.kind === 'plain' ? -1 : e.producerId,
            producerEpoch: 0,
            baseSequence: 0,
            transactional: e.kind === 'data',
          });
    batch.writeBigInt64BE(BigInt(offset), 0);
    batches.push(batch);
    kinds.push(`${e.kind}@${offset}/${e.producerId}`);
    offset += e.kind === 'commit' || e.kind === 'abort' ? 1 : n;
  }
  return { buf: Buffer.concat(batches), kinds };
}

function kept(filter: AbortedTransactionFilter, buf: Buffer, kinds: string[]): string[] {
  const out: string[] = [];
  for (let pos = 0, i = 0; pos < buf.length; i++) {
    if (filter.keeps(buf, pos)) out.push(kinds[i]!);
    pos += 12 + buf.readInt32BE(pos + 8);
  }
  return out;
}

describe('aborted transaction filter', () => {
  const { buf, kinds } = log([
    { producerId: 1, kind: 'data', n: 2 }, // 0-1, aborted
    { producerId: 2, kind: 'data' }, // 2, committed
    { producerId: 1, kind: 'abort' }, // 3
    { producerId: 9, kind: 'plain' }, // 4
    { producerId: 2, kind: 'commit' }, // 5
    { producerId: 1, kind: 'data' }, // 6, committed (a later transaction of producer 1)
    { producerId: 1, kind: 'commit' }, // 7
  ]);

  it('drops aborted transactions and markers under read_committed', () => {
    const filter = new AbortedTransactionFilter(true, [{ producerId: 1n, firstOffset: 0n }]);
    expect(kept(filter, buf, kinds)).toEqual(['data@2/2', 'plain@4/9', 'data@6/1']);
  });

  it('keeps every data batch, aborted or not, under read_uncommitted, and drops only markers', () => {
    const filter = new AbortedTransactionFilter(false, [{ producerId: 1n, firstOffset: 0n }]);
    expect(kept(filter, buf, kinds)).toEqual(['data@0/1', 'data@2/2', 'plain@4/9', 'data@6/1']);
  });

  it('keeps transactional batches that no aborted transaction covers', () => {
    const filter = new AbortedTransactionFilter(true, []);
    expect(kept(filter, buf, kinds)).toEqual(['data@0/1', 'data@2/2', 'plain@4/9', 'data@6/1']);
  });

  it('answers without aborted transactions share one filter that keeps no state between them', () => {
    const all = ['data@0/1', 'data@2/2', 'plain@4/9', 'data@6/1'];
    const first = AbortedTransactionFilter.forAnswer(true, []);
    expect(kept(first, buf, kinds)).toEqual(all);
    // An answer with an aborted transaction gets a filter of its own...
    const aborting = AbortedTransactionFilter.forAnswer(true, [
      { producerId: 1n, firstOffset: 0n },
    ]);
    expect(aborting).not.toBe(first);
    expect(kept(aborting, buf, kinds)).toEqual(['data@2/2', 'plain@4/9', 'data@6/1']);
    // ...and the shared one is unchanged by it and by its own earlier use.
    expect(AbortedTransactionFilter.forAnswer(true, null)).toBe(first);
    expect(kept(AbortedTransactionFilter.forAnswer(true, []), buf, kinds)).toEqual(all);
    expect(kept(AbortedTransactionFilter.forAnswer(false, undefined), buf, kinds)).toEqual(all);
  });
});
