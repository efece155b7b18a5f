/**
 * Parser of `COPY ... TO STDOUT` text format, the bytes the snapshot reader streams
 * (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format"):
 *   row     fields separated by a tab, ended by a newline (always '\n' on output)
 *   null    the two characters \N as a whole field
 *   escapes \b \f \n \r \t \v and \\ ; \ooo (1-3 octal digits) and \xhh (1-2 hex
 *           digits) give one byte each; a backslash before any other character
 *           stands for that character
 * The values that come out are the type output functions' text, the very text
 * pgoutput sends, so the same column mappings serve snapshot and stream.
 *
 * Why this shape: a raw tab or newline byte never occurs inside a field (COPY
 * escapes them), and no byte of a multibyte UTF-8 character is below 0x80, so row and
 * field boundaries can be found without decoding. `push` therefore cuts each chunk
 * after its last newline, decodes everything before it to one string in one native
 * call, and keeps the tail (a partial row, possibly ending inside a UTF-8 character or
 * an escape) as bytes until a later chunk completes it. `nextRow` then scans that
 * string with charCodeAt and takes fields as slices: no regex, no per-field decode.
 * Fields with escapes are rare and take a slower path.
 *
 * Pull style so the caller can stop between any two rows (to await back-pressure)
 * and carry on later. One parser per COPY; not shared between async tasks.
 */
import type { ColumnValue } from './pgoutput-decoder.ts';

const TAB = 9;
const NEWLINE = 10;
const BACKSLASH = 92;

export class CopyFormatError extends Error {
  readonly kind = 'copy-format';
  constructor(message: string) {
    super(`Malformed COPY text data: ${message}`);
    this.name = 'CopyFormatError';
  }
}

export class CopyTextParser {
  /** Decoded whole rows not yet handed out, from `pos` on. */
  private text = '';
  private pos = 0;
  /** Bytes after the last newline seen: the start of a row still incomplete. */
  private partial: Buffer[] = [];
  private rows = 0;

  /** @param columns fields every row must have */
  constructor(private readonly columns: number) {}

  /** Add the next chunk of COPY data; it may end anywhere, even inside a character. */
  push(chunk: Buffer): void {
    const newline = chunk.lastIndexOf(NEWLINE);
    if (newline < 0) {
      if (chunk.length > 0) this.partial.push(chunk);
      return;
    }
    let complete = chunk.subarray(0, newline + 1);
    if (this.partial.length > 0) {
      this.partial.push(complete);
      complete = Buffer.concat(this.partial);
      this.partial = [];
    }
    if (newline + 1 < chunk.length) this.partial.push(chunk.subarray(newline + 1));
    const decoded = complete.toString('utf8');
    this.text = this.pos < this.text.length ? this.text.slice(this.pos) + decoded : decoded;
    this.pos = 0;
  }

  /** The next whole row's fields (null for SQL NULL), or null until more data is pushed. */
  nextRow(): ColumnValue[] | null {
    const text = this.text;
    const end = text.length;
    let i = this.pos;
    if (i >= end) return null;
    const row: ColumnValue[] = [];
    let start = i;
    let escaped = false;
    for (;;) {
      // Every decoded row ends with a newline (push cuts after one), so i stays < end.
      const c = text.charCodeAt(i);
      if (c === TAB || c === NEWLINE) {
        row.push(field(text, start, i, escaped));
        if (c === NEWLINE) break;
        start = i + 1;
        escaped = false;
      } else if (c === BACKSLASH) {
        // A backslash takes the next character as data, a tab too, but never the row's
        // newline: COPY writes a backslash in data as \\, so one cannot end a row.
        if (text.charCodeAt(i + 1) === NEWLINE)
          throw new CopyFormatError(`row ${this.rows + 1} ends in a backslash`);
        escaped = true;
        i++;
      }
      i++;
    }
    this.pos = i + 1;
    this.rows++;
    if (row.length !== this.columns) {
      throw new CopyFormatError(
        `row ${this.rows} has ${row.length} fields, expected ${this.columns}`,
      );
    }
    return row;
  }

  /** The data is over: anything left is a truncated row. */
  end(): void {
    if (this.partial.length > 0 || this.pos < this.text.length)
      throw new CopyFormatError(`data ends inside row ${this.rows + 1}`);
  }
}

function field(text: string, start: number, end: number, escaped: boolean): ColumnValue {
  if (!escaped) return text.slice(start, end);
  if (end - start === 2 && text.charCodeAt(start + 1) === 78 /* N */) return null;
  return unescapeField(text, start, end);
}

/** Single-character escapes: the character after the backslash to what it stands for. */
const SIMPLE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

function isOctal(c: number): boolean {
  return c >= 48 && c <= 55;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function unescapeField(text: string, start: number, end: number): string {
  let out = '';
  let from = start;
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) !== BACKSLASH) continue;
    const next = text.charCodeAt(i + 1);
    // Octal and hex escapes are bytes, possibly parts of one UTF-8 character.
    if (isOctal(next) || (next === 120 /* x */ && hexValue(text.charCodeAt(i + 2)) >= 0))
      return unescapeBytes(text.slice(start, end));
    out += text.slice(from, i) + (SIMPLE[text[i + 1]] ?? text[i + 1] ?? '');
    i++;
    from = i + 1;
  }
  return out + text.slice(from, end);
}

/** The general case, on the field's UTF-8 bytes. */
function unescapeBytes(escapedField: string): string {
  const src = Buffer.from(escapedField, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const b = src[i];
    if (b !== BACKSLASH || i + 1 >= src.length) {
      out[n++] = b;
      continue;
    }
    const next = src[++i];
    if (isOctal(next)) {
      let v = next - 48;
      for (let k = 0; k < 2 && i + 1 < src.length && isOctal(src[i + 1]); k++)
        v = v * 8 + (src[++i] - 48);
      out[n++] = v & 0xff; // \777 wraps as Postgres does
    } else if (next === 120 /* x */ && i + 1 < src.length && hexValue(src[i + 1]) >= 0) {
      let v = hexValue(src[++i]);
      if (i + 1 < src.length && hexValue(src[i + 1]) >= 0) v = v * 16 + hexValue(src[++i]);
      out[n++] = v;
    } else {
      const simple = SIMPLE[String.fromCharCode(next)];
      out[n++] = simple === undefined ? next : simple.charCodeAt(0);
    }
  }
  return out.toString('utf8', 0, n);
}
