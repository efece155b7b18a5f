/**
 * schema.name.adjustment.mode and field.name.adjustment.mode, as Debezium's
 * SchemaNameAdjuster applies them, so Connect schema names and field names are valid
 * Avro names:
 *   none          names as they are (Debezium's default for both keys)
 *   avro          each character Avro refuses becomes "_"
 *   avro_unicode  each such character becomes _uXXXX (its UTF-16 code in hex), "_"
 *                 included, since "_" is the escape: no two names collide
 * Avro names start with [A-Za-z_] and go on with [A-Za-z0-9_]; a schema name is a full
 * name, so "." is allowed after the first character, a field name is not (no "."). As
 * in Debezium: in avro mode a leading digit is kept behind its "_" ("1st" -> "_1st"),
 * so names that differ only there stay apart; a code of one or two hex digits is
 * padded to four ("-" -> _u002d), a longer one is not (Java's Integer.toHexString
 * with Debezium's "00" pad).
 *
 * Schema names are adjusted by one adjuster per task: two different names adjusted to
 * the same one fail the task (NameConflictError), as Debezium's does, since two tables
 * would otherwise share a schema name. Field names collide only within one struct
 * (table-schema.ts checks that); the Java SchemaBuilder refuses such a struct too.
 * Characters are UTF-16 code units, as Java's chars are.
 */
import { ConnectException } from '../../../src/connect/api/index.ts';

export const NAME_ADJUSTMENT_MODES = ['none', 'avro', 'avro_unicode'] as const;
export type NameAdjustmentMode = (typeof NAME_ADJUSTMENT_MODES)[number];

export class NameConflictError extends ConnectException {
  constructor(original: string, replacement: string, other: string) {
    super(
      `The Kafka Connect schema name '${original}' is not a valid Avro schema name and its replacement ` +
        `'${replacement}' conflicts with another different schema '${other}'`,
    );
    this.name = 'NameConflictError';
  }
}

const isLetter = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isDigit = (c: string) => c >= '0' && c <= '9';

interface Rules {
  first(c: string): boolean;
  rest(c: string): boolean;
  replace(c: string): string;
  /** Whether a leading digit is kept after its replacement (avro modes, not unicode). */
  keepLeadingDigit: boolean;
}

function unicode(c: string): string {
  let hex = c.charCodeAt(0).toString(16);
  if (hex.length <= 2) hex = `00${hex}`;
  return `_u${hex}`;
}

function rules(mode: Exclude<NameAdjustmentMode, 'none'>, kind: 'schema' | 'field'): Rules {
  const dot = kind === 'schema';
  if (mode === 'avro')
    return {
      first: (c) => isLetter(c) || c === '_',
      rest: (c) => isLetter(c) || c === '_' || isDigit(c) || (dot && c === '.'),
      replace: () => '_',
      keepLeadingDigit: true,
    };
  return {
    first: isLetter,
    rest: (c) => isLetter(c) || isDigit(c) || (dot && c === '.'),
    replace: unicode,
    keepLeadingDigit: false,
  };
}

function adjust(name: string, r: Rules): string {
  if (name.length === 0) return name;
  let out = '';
  let changed = false;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (i === 0 ? r.first(c) : r.rest(c)) {
      out += c;
      continue;
    }
    changed = true;
    out += r.replace(c);
    if (i === 0 && r.keepLeadingDigit && isDigit(c)) out += c;
  }
  return changed ? out : name;
}

/** A field name adjusted per field.name.adjustment.mode. */
export function adjustFieldName(mode: NameAdjustmentMode, name: string): string {
  return mode === 'none' ? name : adjust(name, rules(mode, 'field'));
}

/** Adjusts schema names per schema.name.adjustment.mode, refusing two names made one. */
export class SchemaNameAdjuster {
  private readonly originalOf = new Map<string, string>();

  constructor(readonly mode: NameAdjustmentMode) {}

  adjust(name: string): string {
    if (this.mode === 'none') return name;
    const adjusted = adjust(name, rules(this.mode, 'schema'));
    if (adjusted === name) return name;
    const other = this.originalOf.get(adjusted);
    if (other !== undefined && other !== name) throw new NameConflictError(name, adjusted, other);
    this.originalOf.set(adjusted, name);
    return adjusted;
  }
}
