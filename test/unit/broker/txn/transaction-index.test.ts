/** The aborted-transaction index file (.txnindex): format, lookups and corruption. */
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TransactionIndex,
  TXN_INDEX_ENTRY_BYTES,
} from '../../../../src/broker/log/transaction-index.ts';
import { tempDir } from '../log/log-test-helpers.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function indexAt(name = '00000000000000000100.txnindex'): TransactionIndex {
  const tmp = tempDir('txnindex-');
  cleanups.push(tmp.remove);
  return new TransactionIndex(join(tmp.dir, name), 100);
}

const entry = (producerId: number, firstOffset: number, lastOffset: number) => ({
  producerId,
  firstOffset,
  lastOffset,
  lastStableOffset: lastOffset + 1,
});

describe('TransactionIndex', () => {
  it('writes 34-byte entries that read back, and answers the transactions overlapping a range', () => {
    const index = indexAt();
    index.append(entry(1, 90, 105));
    index.append(entry(2, 106, 110));
    index.append(entry(2, 106, 110)); // replayed: ignored
    expect(statSync(index.path).size).toBe(2 * TXN_INDEX_ENTRY_BYTES);
    const bytes = readFileSync(index.path);
    expect(bytes.readInt16BE(0)).toBe(0);
    expect(bytes.readBigInt64BE(2)).toBe(1n);
    const reopened = new TransactionIndex(index.path, 100);
    reopened.load();
    expect(reopened.all).toEqual([entry(1, 90, 105), entry(2, 106, 110)]);
    expect(reopened.overlapping(100, 106).map((e) => e.producerId)).toEqual([1]);
    expect(reopened.overlapping(106, 200).map((e) => e.producerId)).toEqual([2]);
    expect(reopened.overlapping(111, 200)).toEqual([]);
  });

  it('answers exactly the entries a scan of the whole index would, for any range', () => {
    const index = indexAt();
    // Long and short transactions, some nested in others' ranges, markers in order.
    const entries = [
      entry(2, 104, 105),
      entry(1, 100, 130),
      entry(3, 101, 140),
      entry(4, 141, 142),
    ];
    for (const e of entries) index.append(e);
    for (let from = 95; from <= 145; from++) {
      for (let upTo = from; upTo <= 150; upTo += 3) {
        const scanned = entries.filter((e) => e.lastOffset >= from && e.firstOffset < upTo);
        expect(index.overlapping(from, upTo), `[${from}, ${upTo})`).toEqual(scanned);
      }
    }
  });

  it('drops entries whose marker is cut off by recovery', () => {
    const index = indexAt();
    index.append(entry(1, 100, 101));
    index.append(entry(2, 100, 108));
    index.truncateTo(108);
    const reopened = new TransactionIndex(index.path, 100);
    reopened.load();
    expect(reopened.all).toEqual([entry(1, 100, 101)]);
  });

  it.each([
    ['a torn entry', (path: string) => appendFileSync(path, Buffer.from([0, 0, 7]))],
    [
      'entries out of order',
      (path: string) => {
        const one = readFileSync(path);
        writeFileSync(path, Buffer.concat([one, one]));
      },
    ],
  ])('a file with %s is emptied and marked lost, for a rebuild from the log', (_what, damage) => {
    const index = indexAt();
    index.append(entry(1, 100, 101));
    damage(index.path);
    const reopened = new TransactionIndex(index.path, 100);
    reopened.load();
    expect(reopened.lost).toBe(true);
    expect(reopened.all).toEqual([]);
    expect(statSync(index.path).size).toBe(0);
  });
});
