/**
 * JsonConverter's messages are views of shared 1 MiB slabs; release() hands one back,
 * and a slab the writers have left is reused only once every message in it is back.
 * A message still held keeps its bytes, however much is written and released around it.
 */
import { describe, expect, it } from 'vitest';
import { JsonConverter } from '../../../../src/connect/converters/json-converter.ts';
import {
  ConverterHeaderConverter,
  SimpleHeaderConverter,
} from '../../../../src/connect/runtime/header-converter.ts';
import { offsetKey, offsetValue } from '../../../../src/connect/runtime/offset-keys.ts';

const SLAB = 1024 * 1024;

function converter(): JsonConverter {
  const c = new JsonConverter();
  c.configure({ 'schemas.enable': false }, false);
  return c;
}

/** Schemaless string messages of about 10 kB, each with its own text. */
function message(c: JsonConverter, n: number): Buffer {
  return c.fromConnectData('t', null, `${n}:`.padEnd(10_000, String.fromCharCode(97 + (n % 26))))!;
}

const text = (n: number) =>
  JSON.stringify(`${n}:`.padEnd(10_000, String.fromCharCode(97 + (n % 26))));

/** Writes messages until one lands in a slab other than `slab`; returns them all. */
function fillPast(c: JsonConverter, slab: ArrayBufferLike, from: number): Buffer[] {
  const out: Buffer[] = [];
  for (let n = from; ; n++) {
    const m = message(c, n);
    out.push(m);
    if (m.buffer !== slab) return out;
  }
}

describe('JsonConverter.release', () => {
  it('reuses a left slab once all its messages are back, and not before', () => {
    const c = converter();
    // Start in a fresh slab: fill whatever slab is current first.
    const first = message(c, 0);
    const start = fillPast(c, first.buffer, 1).at(-1)!;
    const slab = start.buffer;
    const inSlab = [start, ...fillPast(c, slab, 1_000)];
    const next = inSlab.pop()!; // the first message of the following slab
    expect(inSlab.length).toBeGreaterThan(50);
    expect(inSlab.every((m) => m.buffer === slab)).toBe(true);

    // All but one back: the slab is not reused, and the one held keeps its bytes.
    const held = inSlab[7]!;
    for (const m of inSlab) if (m !== held) c.release(m);
    const later = fillPast(c, next.buffer, 2_000);
    expect(later.every((m) => m.buffer !== slab)).toBe(true);
    expect(held.toString()).toBe(text(1_006));

    // The last one back: the next slab needed is that one.
    c.release(held);
    const after = fillPast(c, later.at(-1)!.buffer, 3_000);
    expect(after.at(-1)!.buffer === slab, 'the slab reused').toBe(true);
    expect(after.at(-1)!.toString()).toBe(text(3_000 + after.length - 1));
  });

  it('never overwrites messages that were not handed back', () => {
    const c = converter();
    const kept = Array.from({ length: 300 }, (_, n) => message(c, n));
    // Lots of traffic around them, handed back as it goes.
    for (let n = 300; n < 2_000; n++) c.release(message(c, n));
    kept.forEach((m, n) => {
      expect(m.toString() === text(n), `message ${n}`).toBe(true);
    });
    expect(kept.reduce((a, m) => a + m.length, 0)).toBeGreaterThan(SLAB);
  });

  it("is not held back by the runtime's own JSON: offsets and header values", () => {
    // Each is written into the shared slab between a task's records; none is handed
    // back by a caller, so each must hand itself back (an exactly-once task writes an
    // offset per transaction: one kept message per slab kept every slab from reuse).
    const c = converter();
    const simple = new SimpleHeaderConverter();
    const plugin = new ConverterHeaderConverter(converter());
    const first = message(c, 0);
    const start = fillPast(c, first.buffer, 1).at(-1)!;
    const slab = start.buffer;
    const inSlab = [start];
    const own: Array<Buffer | string | null> = [];
    for (let n = 1_000; ; n++) {
      own.push(offsetKey('conn', { server: `s${n}` }), offsetValue({ lsn: n }));
      own.push(simple.toBytes('t', { key: 'h', value: { n }, schema: null }));
      own.push(plugin.toBytes('t', { key: 'h', value: [n], schema: null }));
      const m = message(c, n);
      inSlab.push(m);
      if (m.buffer !== slab) break;
    }
    const next = inSlab.pop()!;
    for (const m of inSlab) c.release(m);
    const after = fillPast(c, next.buffer, 3_000);
    // (Not toBe on the buffers: a failure would print a diff of two 1 MiB buffers.)
    expect(after.at(-1)!.buffer === slab, 'the slab reused').toBe(true);
    // And what they returned is theirs: not overwritten by the slab's reuse.
    expect(own[1]).toBe('{"lsn":1000}');
    expect(own[2]?.toString()).toBe('{"n":1000}');
    expect(own[3]?.toString()).toBe('[1000]');
  });

  it('ignores buffers it did not write', () => {
    const c = converter();
    const foreign = Buffer.from('"x"');
    c.release(foreign);
    c.release(Buffer.allocUnsafeSlow(SLAB));
    expect(message(c, 1).toString()).toBe(text(1));
  });
});
