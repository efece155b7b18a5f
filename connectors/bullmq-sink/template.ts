/**
 * Name templates: `queue.name`, `job.name` and a field-based `job.id` are text with
 * `${...}` placeholders, parsed once at start (and by /config/validate), rendered per
 * record.
 *
 * Placeholders:
 *   ${topic} ${partition}           the record's topic and partition
 *   ${table} ${schema} ${db}        `source.table`, `source.schema`, `source.db` of a
 *                                   Debezium envelope (a DataException when absent)
 *   ${value.<path>} ${key.<path>}   a field of the value or key, by dot path
 *                                   (`${value.op}`, `${value.after.status}`); `${key}`
 *                                   alone is the whole key when it is a primitive
 * Anything else between `${` and `}` is refused by name, as is an unclosed `${`, so a
 * typo fails validation rather than naming every job the same.
 */
import { DataException, type SinkRecord } from '../../src/connect/api/index.ts';
import { debeziumSource, fieldAt, scalarText } from './record-fields.ts';

export type Placeholder =
  | { kind: 'topic' }
  | { kind: 'partition' }
  | { kind: 'source'; field: 'table' | 'schema' | 'db' }
  | { kind: 'field'; of: 'value' | 'key'; path: string[] };

export type TemplatePart = string | Placeholder;

export interface Template {
  readonly text: string;
  readonly parts: readonly TemplatePart[];
  /** True when no placeholder: every record gets the same text. */
  readonly fixed: boolean;
}

export class TemplateError extends Error {}

const SOURCE_FIELDS = new Set(['table', 'schema', 'db']);

export function parseTemplate(text: string): Template {
  const parts: TemplatePart[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('${', i);
    if (open < 0) {
      parts.push(text.slice(i));
      break;
    }
    if (open > i) parts.push(text.slice(i, open));
    const close = text.indexOf('}', open + 2);
    if (close < 0) throw new TemplateError(`unclosed \${ at position ${open}`);
    parts.push(placeholder(text.slice(open + 2, close).trim()));
    i = close + 1;
  }
  return { text, parts, fixed: parts.every((p) => typeof p === 'string') };
}

function placeholder(name: string): Placeholder {
  if (name === 'topic') return { kind: 'topic' };
  if (name === 'partition') return { kind: 'partition' };
  if (SOURCE_FIELDS.has(name)) return { kind: 'source', field: name as 'table' | 'schema' | 'db' };
  if (name === 'key') return { kind: 'field', of: 'key', path: [] };
  const m = /^(value|key)\.(.+)$/.exec(name);
  if (m) {
    const path = m[2]!.split('.');
    if (path.some((p) => p === '')) throw new TemplateError(`\${${name}} has an empty field name`);
    return { kind: 'field', of: m[1] as 'value' | 'key', path };
  }
  throw new TemplateError(
    `unknown placeholder \${${name}}; use \${topic}, \${partition}, \${table}, \${schema}, \${db}, \${key}, \${key.<field>} or \${value.<field>}`,
  );
}

/** The text for one record; a DataException names the placeholder it could not fill. */
export function renderTemplate(t: Template, record: SinkRecord): string {
  if (t.fixed) return t.text;
  let out = '';
  for (const part of t.parts) {
    if (typeof part === 'string') out += part;
    else out += placeholderText(part, record, t.text);
  }
  return out;
}

function placeholderText(p: Placeholder, record: SinkRecord, template: string): string {
  switch (p.kind) {
    case 'topic':
      return record.topic;
    case 'partition':
      return String(record.kafkaPartition);
    case 'source': {
      const v = debeziumSource(record.value)?.[p.field];
      if (typeof v !== 'string' || v === '') {
        throw new DataException(
          `${where(record)}: '${template}' needs source.${p.field} of a Debezium envelope, which the value lacks`,
        );
      }
      return v;
    }
    case 'field': {
      const root = p.of === 'value' ? record.value : record.key;
      const v = fieldAt(root, p.path);
      const text = scalarText(v);
      if (text === undefined) {
        const name = [p.of, ...p.path].join('.');
        throw new DataException(
          `${where(record)}: '${template}' needs ${name}, which is ${v === undefined ? 'missing' : `not a scalar (${typeof v})`}`,
        );
      }
      return text;
    }
  }
}

export function where(record: SinkRecord): string {
  return `record ${record.topic}-${record.kafkaPartition}@${record.kafkaOffset}`;
}
