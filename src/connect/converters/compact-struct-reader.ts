/**
 * The fast path for the commonest payload a sink reads: a flat struct (fields of
 * integer, floating-point, boolean and string types, Debezium's flattened rows) in the
 * compact JSON a JsonConverter writes: fields in schema order, no whitespace. It reads
 * the UTF-8 bytes straight into the struct value, where the general path decodes the
 * payload to text, scans it for long numbers, JSON.parses it and then copies the
 * parsed object field by field; that is about half of a CDC record's conversion cost.
 *
 * Contract: read() returns exactly what the general path (json-reader.ts, then
 * JsonToConnect.value) returns for the same bytes, or undefined, and then the caller
 * takes the general path. It declines whatever it does not handle exactly rather than
 * approximating it: whitespace, another key order, missing or extra fields, string
 * escapes and control characters, integers of more than 15 digits, JSON it finds
 * invalid, values the field rejects (so errors always come from the general path,
 * with its messages), and nulls that a default would replace. Its numbers are the
 * same doubles: integers of at most 15 digits are exact, decimals of at most 15
 * significant digits are m / 10^k with both exact (one correctly rounded division:
 * the fast path of Clinger's algorithm), and anything else goes through Number().
 */
import type { Schema } from '../api/index.ts';

type Kind = 'int' | 'int64' | 'float32' | 'float64' | 'boolean' | 'string';

interface CompactField {
  name: string;
  /** `"name":` as UTF-8 bytes, after a `,` for every field but the first. */
  key: Uint8Array;
  kind: Kind;
  /** Range of Int fields: -limit <= n < limit. */
  limit: number;
  /** Optional without a default: a JSON null reads as null. */
  nullable: boolean;
  /** String fields: the field's recent short values, so a repeated one is not made again. */
  strings: StringCache | null;
}

const INT_LIMIT: Partial<Record<Schema['type'], number>> = {
  int8: 0x80,
  int16: 0x8000,
  int32: 0x80000000,
};

const KIND: Partial<Record<Schema['type'], Kind>> = {
  int8: 'int',
  int16: 'int',
  int32: 'int',
  int64: 'int64',
  float32: 'float32',
  float64: 'float64',
  boolean: 'boolean',
  string: 'string',
};

const DECIMAL = 'org.apache.kafka.connect.data.Decimal';
/** Digits an integer may have and still be exact in a double, with room to spare. */
const MAX_DIGITS = 15;
/** Powers of ten that are exact doubles (10^22 is the last). */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE = 0x7d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;

export class CompactStructReader {
  /** read(), compiled for the schema's fields: see compileRead. */
  private readonly compiled: CompiledRead;

  private constructor(fields: readonly CompactField[]) {
    this.compiled = compileRead(fields);
  }

  /** The reader of a struct schema, or null when a field has a type it does not handle. */
  static of(schema: Schema): CompactStructReader | null {
    if (schema.type !== 'struct' || schema.fields === undefined || schema.fields.length === 0) {
      return null;
    }
    const fields: CompactField[] = [];
    for (const [i, f] of schema.fields.entries()) {
      const kind = KIND[f.schema.type];
      // __proto__ sets a prototype, both in the general path's assignment and in an
      // object literal; leave that to the general path.
      if (kind === undefined || f.schema.name === DECIMAL || f.name === '__proto__') return null;
      fields.push({
        name: f.name,
        key: Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(f.name)}:`, 'utf8'),
        kind,
        limit: INT_LIMIT[f.schema.type] ?? 0,
        nullable:
          f.schema.optional &&
          (f.schema.defaultValue === undefined || f.schema.defaultValue === null),
        strings: kind === 'string' ? new StringCache() : null,
      });
    }
    return new CompactStructReader(fields);
  }

  /** The struct in bytes[start, end), or undefined to take the general path. */
  read(bytes: Buffer, start: number, end: number): Record<string, unknown> | undefined {
    return this.compiled(bytes, start, end, this);
  }

  /**
   * Where the last number() ended (a field, not a tuple: this runs for every value).
   * Public for the compiled read() only.
   */
  numberEnd = 0;

  /**
   * A JSON number at `p` as the double JSON.parse gives, or undefined for what the
   * fast path leaves to the general one. Sets numberEnd. Public for the compiled
   * read() only.
   */
  number(bytes: Buffer, p: number, end: number): number | undefined {
    const intEnd = integerEnd(bytes, p, end);
    if (intEnd < 0) return undefined;
    const c = bytes[intEnd];
    if (c !== DOT && c !== 0x65 && c !== 0x45) {
      const digits = intEnd - p - (bytes[p] === MINUS ? 1 : 0);
      if (digits > MAX_DIGITS || !endsValue(c)) return undefined;
      this.numberEnd = intEnd;
      return integerValue(bytes, p, intEnd);
    }
    let q = intEnd;
    let fractionDigits = 0;
    if (c === DOT) {
      q++;
      while (q < end && isDigit(bytes[q] as number)) q++;
      fractionDigits = q - intEnd - 1;
      if (fractionDigits === 0 || fractionDigits >= POW10.length) return undefined;
    }
    const e = bytes[q];
    if (e === 0x65 || e === 0x45) {
      // An exponent (Java writes 1.0E-5): valid JSON goes through Number().
      q++;
      if (bytes[q] === 0x2b || bytes[q] === MINUS) q++;
      const digitsFrom = q;
      while (q < end && isDigit(bytes[q] as number)) q++;
      if (q === digitsFrom || !endsValue(bytes[q])) return undefined;
      this.numberEnd = q;
      return Number(bytes.toString('latin1', p, q));
    }
    if (!endsValue(bytes[q])) return undefined;
    const negative = bytes[p] === MINUS;
    // Digits of the mantissa without leading zeros: at most 15 are exact.
    let m = 0;
    let significant = 0;
    for (let i = negative ? p + 1 : p; i < q; i++) {
      const d = bytes[i] as number;
      if (d === DOT) continue;
      if (significant > 0 || d !== ZERO) significant++;
      m = m * 10 + (d - ZERO);
    }
    if (significant > MAX_DIGITS) return undefined;
    this.numberEnd = q;
    const n = m / (POW10[fractionDigits] as number);
    return negative ? -n : n;
  }
}

/** ASCII strings up to this long go through a field's StringCache. */
const CACHED_STRING_MAX = 24;
/** A cache starts with this many slots and may grow to STRING_SLOTS_MAX (see StringCache). */
const STRING_SLOTS_MIN = 256;
const STRING_SLOTS_MAX = 4096;
/** Lookups between two looks at a cache's hit rate. */
const STRING_WINDOW = 8192;

/**
 * A field's last ASCII strings by hash slot. Enumerations, codes and flags (a CDC
 * row's status, `__op`) repeat from row to row; reading one from the cache costs a
 * compare of a few bytes where making it costs a call into the runtime, a string to
 * collect, and a hash computed again wherever the string is a key (a Parquet column's
 * dictionary). A slot holds the last string that hashed there, so unique values only
 * cost the compare of a miss.
 *
 * The size adapts to the field. A field of a few hundred or thousand recurring values
 * (product codes, cities) hits only now and then in 256 slots, its values evicting
 * each other: while a window's hit rate is between 10% and 90%, the slots double, up
 * to 4096 (32 KB of slots and at most 4096 short strings). A field that hits nearly
 * always needs no more; one that nearly never hits holds unique values, for which more
 * slots would only keep more garbage alive. Which strings come from the cache never
 * changes a value read, only whether it is made again.
 */
export class StringCache {
  private slots: Array<string | null> = new Array<string | null>(STRING_SLOTS_MIN).fill(null);
  private mask = STRING_SLOTS_MIN - 1;
  private lookups = 0;
  private hits = 0;

  /** The ASCII string of bytes[start, end), whose hash the caller computed. */
  get(bytes: Buffer, start: number, end: number, hash: number): string {
    if (++this.lookups === STRING_WINDOW) this.review();
    const slot = hash & this.mask;
    const cached = this.slots[slot] as string | null;
    const length = end - start;
    if (cached !== null && cached.length === length) {
      let k = 0;
      while (k < length && cached.charCodeAt(k) === bytes[start + k]) k++;
      if (k === length) {
        this.hits++;
        return cached;
      }
    }
    const made = bytes.toString('latin1', start, end);
    this.slots[slot] = made;
    return made;
  }

  /** How many slots it has now. */
  get size(): number {
    return this.slots.length;
  }

  private review(): void {
    const { hits, lookups } = this;
    this.lookups = 0;
    this.hits = 0;
    if (this.slots.length >= STRING_SLOTS_MAX || hits * 10 < lookups || hits * 10 >= lookups * 9) {
      return;
    }
    const size = this.slots.length * 2;
    // Emptied rather than rehashed: the strings do not keep their hashes, and the
    // recurring ones come back within a window.
    this.slots = new Array<string | null>(size).fill(null);
    this.mask = size - 1;
  }
}

type CompiledRead = (
  bytes: Buffer,
  start: number,
  end: number,
  reader: CompactStructReader,
) => Record<string, unknown> | undefined;

/**
 * read() for one schema, as generated code: per field, in order, the key compared
 * byte by byte with constants, then the value parsed for the field's kind; the struct
 * value is one object literal (`{"id": v0, "name": v1, ...}`), so every value of the
 * schema gets the same hidden class at once. Against one loop over the fields, this
 * drops the per-field lookups and branches on the kind, and the array of values.
 * Integers, the common decimals and null/true/false are read inline rather than by
 * helper calls: V8 inlines no calls into a function this large, and those calls were
 * a fifth of its time on a CDC row.
 * What it accepts and returns is exactly what that loop did (the tests compare it
 * with the general path). Field names enter the source only as JSON string literals
 * (as in src/protocol/codec.ts), and key bytes as numbers, so no schema text is
 * evaluated.
 */
function compileRead(fields: readonly CompactField[]): CompiledRead {
  const lines: string[] = [
    'let p = start, q = 0, c = 0, d = 0, f = 0, sig = 0, fd = 0, ok = true, hash = 0, ascii = true;',
  ];
  fields.forEach((f, i) => {
    const v = `v${i}`;
    lines.push(`let ${v};`);
    const key = [...f.key];
    lines.push(`if (p + ${key.length} >= end) return undefined;`);
    lines.push(
      `if (${key.map((byte, k) => `bytes[p + ${k}] !== ${byte}`).join(' || ')}) return undefined;`,
    );
    lines.push(`p += ${key.length};`);
    lines.push('if (bytes[p] === 0x6e) {');
    lines.push(
      f.nullable
        ? `  if (!(${wordAt('null')})) return undefined;\n  ${v} = null;\n  p += 4;`
        : '  return undefined;',
    );
    lines.push('} else {');
    switch (f.kind) {
      case 'int':
      case 'int64':
        // The integer read in one pass over its digits: a CDC row's ids, counts and
        // timestamps are most of its numbers.
        lines.push(`  q = bytes[p] === ${MINUS} ? p + 1 : p;`);
        lines.push('  d = q;');
        lines.push(`  ${v} = 0;`);
        lines.push(`  if (bytes[q] === ${ZERO}) q++;`);
        lines.push(
          `  else while (q < end && (c = bytes[q]) >= ${ZERO} && c <= 0x39) { ${v} = ${v} * 10 + (c - ${ZERO}); q++; }`,
        );
        lines.push(
          `  if (q === d || q - d > ${MAX_DIGITS} || ((c = bytes[q]) !== ${COMMA} && c !== ${CLOSE})) return undefined;`,
        );
        lines.push(`  if (d !== p) ${v} = -${v};`);
        if (f.kind === 'int') {
          lines.push(`  if (${v} < ${-f.limit} || ${v} >= ${f.limit}) return undefined;`);
        }
        lines.push('  p = q;');
        break;
      case 'float32':
      case 'float64':
        // The common decimals (digits, maybe a fraction, at most 15 significant) as
        // m / 10^k in one pass, as number() reads them; anything else (an exponent,
        // more digits, what the general path must judge) goes through number().
        lines.push(`  q = bytes[p] === ${MINUS} ? p + 1 : p;`);
        lines.push(`  d = q; ${v} = 0; sig = 0; fd = 0; ok = true; c = bytes[q];`);
        lines.push(
          `  if (c === ${ZERO}) { c = bytes[++q]; if (c >= ${ZERO} && c <= 0x39) ok = false; }`,
        );
        lines.push(
          `  else while (q < end && c >= ${ZERO} && c <= 0x39) { ${v} = ${v} * 10 + (c - ${ZERO}); sig++; c = bytes[++q]; }`,
        );
        lines.push('  if (q === d) ok = false;');
        lines.push(`  if (ok && c === ${DOT}) {`);
        lines.push('    f = ++q; c = bytes[q];');
        lines.push(
          `    while (q < end && c >= ${ZERO} && c <= 0x39) { ${v} = ${v} * 10 + (c - ${ZERO}); if (sig > 0 || c !== ${ZERO}) sig++; c = bytes[++q]; }`,
        );
        lines.push('    fd = q - f;');
        lines.push('    if (fd === 0) ok = false;');
        lines.push('  }');
        lines.push(
          `  if (!ok || sig > ${MAX_DIGITS} || fd >= ${POW10.length} || (c !== ${COMMA} && c !== ${CLOSE})) {`,
        );
        lines.push(`    ${v} = reader.number(bytes, p, end);`);
        lines.push(`    if (${v} === undefined) return undefined;`);
        lines.push('    q = reader.numberEnd;');
        lines.push('  } else {');
        lines.push(`    ${v} = ${v} / POW10[fd];`);
        lines.push(`    if (d !== p) ${v} = -${v};`);
        lines.push('  }');
        if (f.kind === 'float32') lines.push(`  ${v} = Math.fround(${v});`);
        lines.push('  p = q;');
        break;
      case 'boolean':
        lines.push(`  if (${wordAt('true')}) { ${v} = true; p += 4; }`);
        lines.push(`  else if (${wordAt('false')}) { ${v} = false; p += 5; }`);
        lines.push('  else return undefined;');
        break;
      case 'string':
        lines.push(`  if (bytes[p] !== ${QUOTE}) return undefined;`);
        lines.push('  ascii = true; hash = 0;');
        lines.push('  for (q = p + 1; q < end; q++) {');
        lines.push('    c = bytes[q];');
        lines.push(`    if (c === ${QUOTE}) break;`);
        lines.push(`    if (c === ${BACKSLASH} || c < 0x20) return undefined;`);
        lines.push('    if (c >= 0x80) ascii = false;');
        lines.push('    hash = (Math.imul(hash, 31) + c) | 0;');
        lines.push('  }');
        lines.push('  if (q >= end) return undefined;');
        lines.push(
          `  ${v} = ascii && q - p - 1 <= ${CACHED_STRING_MAX} ? cache${i}.get(bytes, p + 1, q, hash) : bytes.toString(ascii ? 'latin1' : 'utf8', p + 1, q);`,
        );
        lines.push('  p = q + 1;');
        break;
    }
    lines.push('}');
  });
  const props = fields.map((f, i) => `${JSON.stringify(f.name)}: v${i}`).join(', ');
  lines.push(`return p === end - 1 && bytes[p] === ${CLOSE} ? { ${props} } : undefined;`);
  // The helpers, and this reader's own string caches, as constants of a closure.
  const caches = fields.map((_, i) => `const cache${i} = h.caches[${i}];`).join('\n');
  const factory = new Function(
    'h',
    `"use strict";\nconst POW10 = h.POW10;\n${caches}\nreturn function read(bytes, start, end, reader) {\n${lines.join('\n')}\n};`,
  ) as (helpers: object) => CompiledRead;
  return factory({ POW10, caches: fields.map((f) => f.strings) });
}

/**
 * The test that `word` (null, true, false) is at p and ends the value there, as
 * generated code: its bytes compared with constants, then the byte after it.
 */
function wordAt(word: string): string {
  const bytes = [...Buffer.from(word, 'latin1')];
  const same = bytes.map((b, k) => `bytes[p + ${k}] === ${b}`).join(' && ');
  return `${same} && ((c = bytes[p + ${bytes.length}]) === ${COMMA} || c === ${CLOSE})`;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= 0x39;
}

/** A byte that may follow a value in the compact layout: the next field or the end. */
function endsValue(c: number | undefined): boolean {
  return c === COMMA || c === CLOSE;
}

/**
 * The end of the integer part (`-?(0|[1-9][0-9]*)`) of a JSON number at `p`, or -1: a
 * `.` or an exponent may follow, and number() judges its digits and what ends it.
 */
function integerEnd(bytes: Buffer, p: number, end: number): number {
  let q = bytes[p] === MINUS ? p + 1 : p;
  const first = q;
  if (bytes[q] === ZERO) {
    q++;
  } else {
    while (q < end && isDigit(bytes[q] as number)) q++;
  }
  if (q === first) return -1;
  return isDigit(bytes[q] as number) ? -1 : q; // no leading zeros: 01
}

function integerValue(bytes: Buffer, p: number, end: number): number {
  const negative = bytes[p] === MINUS;
  let n = 0;
  for (let i = negative ? p + 1 : p; i < end; i++) n = n * 10 + ((bytes[i] as number) - ZERO);
  return negative ? -n : n;
}
