/**
 * Consistency rules for the schema tables, so a table edit that adds a version or a
 * field cannot silently describe something Kafka's message specs could not.
 */
import { describe, expect, it } from 'vitest';
import { allSchemas } from '../../../src/protocol/api-keys.ts';
import type { ApiSchema, FieldSpec } from '../../../src/protocol/schema.ts';

const NULLABLE_TYPES = new Set(['string', 'bytes', 'records']);

function problems(schema: ApiSchema, fields: readonly FieldSpec[], path: string): string[] {
  const out: string[] = [];
  const names = new Set<string>();
  const tags = new Set<number>();
  for (const f of fields) {
    const where = `${schema.name} ${path}.${f.name}`;
    if (names.has(f.name)) out.push(`${where}: duplicate name`);
    names.add(f.name);
    if (!/^[a-z][A-Za-z0-9]*$/.test(f.name)) out.push(`${where}: not lowerCamelCase`);
    if (f.versions.min > schema.maxVersion) out.push(`${where}: exists in no implemented version`);
    const nullableOk =
      typeof f.type === 'string'
        ? NULLABLE_TYPES.has(f.type)
        : f.type.kind === 'array' || f.type.kind === 'struct';
    if (f.nullableVersions.min <= f.nullableVersions.max && !nullableOk)
      out.push(`${where}: nullable ${String(f.type)}`);
    if (f.tag !== undefined) {
      if (schema.flexibleFrom === null || f.taggedVersions.min < schema.flexibleFrom) {
        out.push(`${where}: tagged outside flexible versions`);
      }
      if (tags.has(f.tag)) out.push(`${where}: duplicate tag ${f.tag}`);
      tags.add(f.tag);
    }
    if (typeof f.type !== 'string') {
      const nested = f.type.kind === 'struct' ? f.type.fields : f.type.of;
      if (typeof nested !== 'string') out.push(...problems(schema, nested, `${path}.${f.name}`));
    }
  }
  return out;
}

describe('schema tables', () => {
  it('have one schema per api key, with a sane version range', () => {
    expect(new Set(allSchemas.map((s) => s.apiKey)).size).toBe(allSchemas.length);
    for (const s of allSchemas) {
      expect(s.minVersion).toBeLessThanOrEqual(s.maxVersion);
      if (s.flexibleFrom !== null) expect(s.flexibleFrom).toBeLessThanOrEqual(s.maxVersion);
    }
  });

  it('name fields in lowerCamelCase, tag only in flexible versions, and null only nullable types', () => {
    const found = allSchemas.flatMap((s) => [
      ...problems(s, s.request, 'request'),
      ...problems(s, s.response, 'response'),
    ]);
    expect(found).toEqual([]);
  });
});
