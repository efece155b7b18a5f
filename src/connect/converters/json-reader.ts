/**
 * JSON text to JavaScript values without losing number precision, as Kafka's
 * JsonConverter reads with Jackson (exact longs, BigDecimal for floats):
 *   - integers come back as number when they are safe integers, else as bigint;
 *   - non-integers with more than 15 significant digits (more than a double holds
 *     exactly) come back as a JsonDecimal holding the literal text, which the
 *     converter turns into a float or an exact Decimal depending on the schema;
 *   - objects are plain objects (a "__proto__" key is an ordinary property).
 * Native JSON.parse is several times faster, so it is used whenever no literal can
 * exceed a double's precision (see needsExactReader); the hand-written parser below
 * handles the rest.
 */
import { DataException } from '../api/index.ts';

/** A number literal too precise for a double; `text` is the JSON literal. */
export class JsonDecimal {
  constructor(readonly text: string) {}
  toNumber(): number {
    return Number(this.text);
  }
}

const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);

/**
 * Whether some literal may lose precision in JSON.parse: a run of 16 or more digits
 * (with a dot, a non-integer), optionally followed by an exponent. Integers of 16
 * digits up to 2^53-1 do not (Debezium's microsecond timestamps are such integers,
 * and they are on every CDC record), so only longer integers and long non-integers
 * need the exact reader. A digit run inside a string may send text to the exact
 * reader needlessly, which costs time, never correctness.
 *
 * This runs on every record, so it skips: when the character 15 places ahead is not
 * part of a run, no run of 16 can start before it, and the scan jumps past it. Most
 * JSON characters are not digits, so it looks at about one character in 16.
 */
function needsExactReader(text: string, integersOnly: boolean): boolean {
  const n = text.length;
  // Invariant: no run starts before i and continues past it.
  let i = 0;
  while (i + 15 < n) {
    const probe = i + 15;
    if (!isRunChar(text.charCodeAt(probe))) {
      i = probe + 1;
      continue;
    }
    let start = probe;
    while (start > i && isRunChar(text.charCodeAt(start - 1))) start--;
    let end = probe + 1;
    while (end < n && isRunChar(text.charCodeAt(end))) end++;
    if (end - start >= 16 && runNeedsExactReader(text, start, end, integersOnly)) return true;
    i = end + 1;
  }
  return false;
}

function runNeedsExactReader(
  text: string,
  start: number,
  end: number,
  integersOnly: boolean,
): boolean {
  let digits = 0;
  let dot = false;
  for (let p = start; p < end; p++) {
    if (text.charCodeAt(p) === 0x2e) dot = true;
    else digits++;
  }
  if (digits < 16) return false;
  if (dot || (end < text.length && (text.charCodeAt(end) | 0x20) === 0x65)) {
    return !integersOnly; // a non-integer (dot or exponent e/E)
  }
  return digits > 16 || text.slice(start, end) > MAX_SAFE_DIGITS;
}

/** A digit or a dot: what a number literal's mantissa is made of. */
function isRunChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e;
}

/**
 * Parse JSON text. `exact` tells whether the exact reader ran, i.e. whether the value
 * may hold bigint or JsonDecimal; when false it is plain JSON.parse output.
 */
export function parseJson(
  text: string,
  /**
   * True when no value can be an exact decimal (a schema without Decimal fields):
   * long non-integers then parse as doubles, as a float64 field reads them anyway.
   */
  integersOnly = false,
): { value: unknown; exact: boolean } {
  if (!needsExactReader(text, integersOnly)) {
    try {
      return { value: JSON.parse(text), exact: false };
    } catch (e) {
      throw new DataException(`Invalid JSON: ${(e as Error).message}`, { cause: e });
    }
  }
  const reader = new ExactReader(text);
  const value = reader.value();
  reader.end();
  return { value, exact: true };
}

class ExactReader {
  private pos = 0;
  constructor(private readonly text: string) {}

  private fail(what: string): never {
    throw new DataException(`Invalid JSON at position ${this.pos}: ${what}`);
  }

  private skipSpace(): void {
    const t = this.text;
    let p = this.pos;
    while (p < t.length) {
      const c = t.charCodeAt(p);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      p++;
    }
    this.pos = p;
  }

  end(): void {
    this.skipSpace();
    if (this.pos !== this.text.length) this.fail('unexpected text after the value');
  }

  value(): unknown {
    this.skipSpace();
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(c)}`);
    }
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(`expected ${word}`);
    this.pos += word.length;
    return value;
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') this.fail('expected a property name');
      const key = this.string();
      this.skipSpace();
      if (this.text[this.pos] !== ':') this.fail("expected ':'");
      this.pos++;
      const v = this.value();
      if (key === '__proto__') {
        Object.defineProperty(out, key, { value: v, enumerable: true, writable: true });
      } else {
        out[key] = v;
      }
      this.skipSpace();
      const c = this.text[this.pos++];
      if (c === '}') return out;
      if (c !== ',') this.fail("expected ',' or '}'");
    }
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.skipSpace();
      const c = this.text[this.pos++];
      if (c === ']') return out;
      if (c !== ',') this.fail("expected ',' or ']'");
    }
  }

  private string(): string {
    // Find the closing quote, then let JSON.parse decode escapes in one native call.
    const start = this.pos;
    let p = start + 1;
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(p);
      if (Number.isNaN(c)) this.fail('unterminated string');
      if (c === 0x22) break;
      p += c === 0x5c ? 2 : 1;
    }
    this.pos = p + 1;
    try {
      return JSON.parse(t.slice(start, p + 1)) as string;
    } catch {
      return this.fail('bad string');
    }
  }

  private number(): number | bigint | JsonDecimal {
    const m = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
    m.lastIndex = this.pos;
    const found = m.exec(this.text);
    if (found === null) this.fail('bad number');
    this.pos = m.lastIndex;
    const literal = found[0];
    if (found[1] === undefined && found[2] === undefined) {
      const n = Number(literal);
      return Number.isSafeInteger(n) ? n : BigInt(literal);
    }
    const significant = literal.replace(/[-.]|[eE].*$/g, '').replace(/^0+/, '');
    return significant.length > 15 ? new JsonDecimal(literal) : Number(literal);
  }
}

/**
 * The index just after the JSON object (or `null`) that starts at `start` in UTF-8
 * bytes, looking no further than `limit`; -1 if there is none. Only brackets and
 * strings are tracked, which is enough to find where a well-formed value ends; the
 * value itself is validated when parsed. Bytes of multi-byte characters are all
 * 0x80 or above, so they never look like a bracket or a quote.
 */
export function endOfObjectBytes(bytes: Uint8Array, start: number, limit: number): number {
  const end = Math.min(limit, bytes.length);
  if (
    bytes[start] === 0x6e &&
    bytes[start + 1] === 0x75 &&
    bytes[start + 2] === 0x6c &&
    bytes[start + 3] === 0x6c &&
    start + 4 <= end
  ) {
    return start + 4; // null
  }
  if (bytes[start] !== 0x7b) return -1;
  let depth = 0;
  for (let p = start; p < end; p++) {
    const c = bytes[p] as number;
    if (c === 0x22) {
      // Skip the string, honouring escapes.
      for (p++; p < end; p++) {
        const d = bytes[p];
        if (d === 0x5c) p++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return p + 1;
    }
  }
  return -1;
}
