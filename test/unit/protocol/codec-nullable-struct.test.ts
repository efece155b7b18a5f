import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBody, defaultBody, encodeBody } from '../../../src/protocol/codec.ts';
import { Reader } from '../../../src/protocol/reader.ts';
import { api, field as f, struct } from '../../../src/protocol/schema.ts';
import { Writer } from '../../../src/protocol/writer.ts';
import { structArbitrary } from './schema-arbitrary.ts';

// Shaped like ConsumerGroupHeartbeatResponse's Assignment: a struct nullable in every
// version, null by default, and a tagged nullable struct in the flexible version.
const schema = api({
  apiKey: 1000,
  name: 'NullableStructProbe',
  maxVersion: 1,
  flexibleFrom: 1,
  request: [],
  response: [
    f('assignment', struct([f('epoch', 'int32', '0+')]), '0+', { nullable: '0+', default: null }),
    f('leader', struct([f('id', 'int32', '1+')]), '1+', { nullable: '1+', tag: 0, default: null }),
  ],
});

const encode = (version: number, body: Record<string, unknown>): Buffer => {
  const w = new Writer(16);
  encodeBody(schema, version, 'response', body, w);
  return w.finish();
};

describe('nullable structs', () => {
  it('are written with an int8 marker: -1 for null, 1 before the struct', () => {
    expect(encode(0, { assignment: null })).toEqual(Buffer.from([0xff]));
    expect(encode(0, { assignment: { epoch: 7 } })).toEqual(Buffer.from([1, 0, 0, 0, 7]));
  });

  it('default to null where the schema says so, and a null tagged struct is not written', () => {
    expect(defaultBody(schema, 1, 'response')).toEqual({ assignment: null, leader: null });
    expect(encode(1, { assignment: null, leader: null })).toEqual(Buffer.from([0xff, 0]));
  });

  it('round-trip null and present values at every version', () => {
    for (const version of [0, 1]) {
      fc.assert(
        fc.property(structArbitrary(schema.response, version), (body) => {
          const bytes = encode(version, body);
          expect(decodeBody(schema, version, 'response', new Reader(bytes))).toEqual({
            ok: true,
            value: body,
          });
        }),
        { numRuns: 50 },
      );
    }
  });
});
