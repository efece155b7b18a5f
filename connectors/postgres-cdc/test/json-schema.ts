/**
 * A Connect schema as JsonConverter prints it (`schemas.enable=true`), so tests can
 * compare our schemas with Debezium's documented JSON field by field.
 */
import type { Schema } from '../../../src/connect/api/index.ts';

export function jsonSchema(schema: Schema, field?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { type: schema.type };
  if (schema.type === 'struct')
    out.fields = (schema.fields ?? []).map((f) => jsonSchema(f.schema, f.name));
  if (schema.type === 'array' && schema.valueSchema) out.items = jsonSchema(schema.valueSchema);
  out.optional = schema.optional;
  if (schema.name !== undefined) out.name = schema.name;
  if (schema.version !== undefined) out.version = schema.version;
  if (schema.parameters !== undefined) out.parameters = schema.parameters;
  if (schema.defaultValue !== undefined) out.default = schema.defaultValue;
  if (field !== undefined) out.field = field;
  return out;
}
