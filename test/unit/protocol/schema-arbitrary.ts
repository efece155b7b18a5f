/**
 * fast-check arbitraries derived from an API schema, for round-trip properties.
 * Built independently of codec.ts: fields absent from a version get the default the
 * naming scheme documents (schema default, else the type's zero value), so a round
 * trip also checks that the codec fills absent fields as documented.
 */
import fc from 'fast-check';
import {
  type FieldSpec,
  type FieldType,
  inRange,
  type PrimitiveType,
} from '../../../src/protocol/schema.ts';

type Value = unknown;

export function typeDefault(type: FieldType, dflt: unknown): Value {
  if (dflt !== undefined) {
    if (type === 'int64' && typeof dflt === 'number') return BigInt(dflt);
    return dflt;
  }
  if (typeof type !== 'string') {
    if (type.kind === 'array') return [];
    return structDefault(type.fields);
  }
  switch (type) {
    case 'bool':
      return false;
    case 'int64':
      return 0n;
    case 'string':
      return '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'records':
      return null;
    case 'uuid':
      return '00000000-0000-0000-0000-000000000000';
    default:
      return 0;
  }
}

function structDefault(fields: readonly FieldSpec[]): Record<string, Value> {
  const o: Record<string, Value> = {};
  for (const f of fields) o[f.name] = typeDefault(f.type, f.default);
  return o;
}

const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
});

function primitive(type: PrimitiveType): fc.Arbitrary<Value> {
  switch (type) {
    case 'bool':
      return fc.boolean();
    case 'int8':
      return fc.integer({ min: -128, max: 127 });
    case 'int16':
      return fc.integer({ min: -32768, max: 32767 });
    case 'uint16':
      return fc.integer({ min: 0, max: 65535 });
    case 'int32':
      return fc.integer();
    case 'uint32':
      return fc.integer({ min: 0, max: 0xffffffff });
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'float64':
      return fc.double({ noNaN: true });
    case 'string':
      return fc.string({ maxLength: 12, unit: 'grapheme' });
    case 'bytes':
    case 'records':
      return fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a));
    case 'uuid':
      return uuid;
  }
}

function valueArb(
  type: FieldType,
  nullable: boolean,
  version: number,
  depth: number,
): fc.Arbitrary<Value> {
  let arb: fc.Arbitrary<Value>;
  if (typeof type === 'string') arb = primitive(type);
  else if (type.kind === 'struct') arb = structArbitrary(type.fields, version, depth + 1);
  else {
    const el =
      typeof type.of === 'string'
        ? primitive(type.of)
        : structArbitrary(type.of, version, depth + 1);
    arb = fc.array(el, { maxLength: depth > 1 ? 2 : 3 });
  }
  return nullable ? fc.option(arb, { nil: null, freq: 4 }) : arb;
}

/** Objects shaped as the codec decodes them at `version`: every field present. */
export function structArbitrary(
  fields: readonly FieldSpec[],
  version: number,
  depth = 0,
): fc.Arbitrary<Record<string, Value>> {
  const record: Record<string, fc.Arbitrary<Value>> = {};
  for (const f of fields) {
    if (!inRange(f.versions, version)) {
      const d = typeDefault(f.type, f.default);
      record[f.name] = fc.constant(d);
    } else {
      record[f.name] = valueArb(f.type, inRange(f.nullableVersions, version), version, depth);
    }
  }
  return fc.record(record);
}
