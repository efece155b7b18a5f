import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allSchemas } from '../../../src/protocol/api-keys.ts';
import { decodeBody, defaultBody, encodeBody, planFor } from '../../../src/protocol/codec.ts';
import { Reader } from '../../../src/protocol/reader.ts';
import { Writer } from '../../../src/protocol/writer.ts';
import { structArbitrary } from './schema-arbitrary.ts';

const cases = allSchemas.flatMap((schema) =>
  Array.from(
    { length: schema.maxVersion - schema.minVersion + 1 },
    (_, i) => schema.minVersion + i,
  ).flatMap((version) =>
    (['request', 'response'] as const).map((direction) => ({ schema, version, direction })),
  ),
);

describe('every API, version and direction round-trips through the codec', () => {
  it.each(cases.map((c) => [`${c.schema.name} v${c.version} ${c.direction}`, c] as const))(
    '%s: decode(encode(m)) equals m and re-encodes to the same bytes',
    (_name, { schema, version, direction }) => {
      const fields = direction === 'request' ? schema.request : schema.response;
      fc.assert(
        fc.property(structArbitrary(fields, version), (message) => {
          const w = new Writer(16);
          encodeBody(schema, version, direction, message, w);
          const bytes = w.finish();
          const decoded = decodeBody(schema, version, direction, new Reader(bytes));
          expect(decoded).toEqual({ ok: true, value: message });
          const again = new Writer(16);
          encodeBody(
            schema,
            version,
            direction,
            (decoded as { value: Record<string, unknown> }).value,
            again,
          );
          expect(again.finish().equals(bytes)).toBe(true);
        }),
        { numRuns: 25 },
      );
    },
  );

  it('a body encoded from defaults decodes to the same defaults at every version', () => {
    for (const { schema, version, direction } of cases) {
      const body = defaultBody(schema, version, direction);
      const w = new Writer();
      encodeBody(schema, version, direction, body, w);
      expect(decodeBody(schema, version, direction, new Reader(w.finish()))).toEqual({
        ok: true,
        value: body,
      });
    }
  });

  it('reuses one compiled plan per (api, version, direction)', () => {
    const { schema, version } = cases[0];
    expect(planFor(schema, version, 'request')).toBe(planFor(schema, version, 'request'));
    expect(planFor(schema, version, 'request')).not.toBe(planFor(schema, version, 'response'));
  });
});
