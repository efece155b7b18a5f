/**
 * JSON tokens written as UTF-8 straight into shared output slabs, for JsonByteWriter:
 * no intermediate strings, no per-message allocation, no copy of the finished message.
 *
 * Slabs: messages are handed out as subarrays of a 1 MiB slab, like Node's Buffer
 * pool but larger (a CDC event with its schema is 1.5-4 KB: a slab holds hundreds,
 * where Node's 8 KiB pool holds a few and does not pool anything over 4 KiB). The
 * slab's unused rest is kept module-wide and shared by every output, so a process has
 * one partly used slab however many converters it runs. A message that outgrows the
 * rest moves what it has written so far into a new slab (once per slab, amortized) and
 * goes on there. A slab lives as long as any message in it: a consumer that keeps one
 * message for long keeps its whole slab.
 *
 * Reuse: a consumer that knows when it has read a message for the last time (a source
 * task, once the producer has copied it into a batch that was acknowledged) may hand it
 * back with releaseJsonBytes(). A slab that the writers have left (it ran full) and whose
 * messages were all handed back is reused for later messages instead of being left to
 * the garbage collector: at CDC rates that is ~170 MB/s of slabs per source task, which
 * V8 frees only when a scavenge or its external-memory trigger comes round. Messages
 * never handed back just keep their slab out of reuse.
 *
 * Invariants: between begin() and finish()/abandon() the output owns its slab (it is
 * taken off the shared list, so a reentrant message on another output gets another
 * slab), and every write reserves its worst case first, so the writes themselves are
 * plain typed-array stores with no bounds checks of their own.
 *
 * Strings are escaped exactly as Jackson does and as json-writer.ts's quote() prints:
 * `"` and `\` backslashed, \b \t \n \f \r short, other control characters as
 * upper-case \u00XX, lone surrogates as upper-case \uDXXX (quote() inherits that from
 * JSON.stringify), everything else as raw UTF-8.
 */

const SLAB_SIZE = 1024 * 1024;
/**
 * Beyond this many UTF-16 units a string's exact size is counted before it is written:
 * reserving the worst case (6 bytes a unit) would waste a large part of a slab.
 */
const COUNT_STRINGS_OVER = 4096;
/**
 * Strings from this length with nothing to escape are encoded by Node: its encoder
 * beats the JavaScript loop from ~60 characters, even after the regular expression
 * that checks them (measured: 200 ASCII characters 380 ns against 570 ns).
 */
const NATIVE_UTF8_FROM = 64;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const NEEDS_ESCAPE_OR_SURROGATE = /["\\\u0000-\u001f\ud800-\udfff]/;
/** Byte arrays beyond this length are base64-encoded by Node: measured faster from ~100 bytes. */
const NATIVE_BASE64_OVER = 96;

const EMPTY = Buffer.alloc(0);

/** The rest of the last slab, free for the next message (null when an output holds it). */
let freeSlab: Buffer | null = null;
let freeFrom = 0;
/** The use record of freeSlab (kept alongside: one WeakMap lookup less per message). */
let freeUse: SlabUse | undefined;

/** Per slab: messages handed out and not handed back, and whether writers have left it. */
interface SlabUse {
  live: number;
  left: boolean;
}
const slabUse = new WeakMap<ArrayBufferLike, SlabUse>();
/** Slabs ready for reuse: left by the writers, every message handed back. */
const spareSlabs: Buffer[] = [];
const MAX_SPARE_SLABS = 4;

function newSlab(): Buffer {
  const slab = spareSlabs.pop() ?? Buffer.allocUnsafeSlow(SLAB_SIZE);
  slabUse.set(slab.buffer, { live: 0, left: false });
  return slab;
}

/**
 * Hands back a message from finish() that its consumer will never read again, nor pass
 * on: its bytes may be overwritten by later messages. Call it at most once per message.
 * Buffers that are not such messages are ignored.
 */
export function releaseJsonBytes(message: Buffer): void {
  const use = slabUse.get(message.buffer);
  if (use === undefined) return;
  use.live--;
  if (use.live === 0 && use.left) reuseSlab(message.buffer);
}

function reuseSlab(slab: ArrayBufferLike): void {
  slabUse.delete(slab);
  if (spareSlabs.length < MAX_SPARE_SLABS) spareSlabs.push(Buffer.from(slab, 0, SLAB_SIZE));
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = '0123456789ABCDEF';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_CODES = Uint8Array.from(BASE64, (c) => c.charCodeAt(0));
const POW10 = Array.from({ length: 17 }, (_, i) => 10 ** i);

/**
 * Per ASCII code: 0 written as is, 0x75 ('u') written as \u00XX, else the letter
 * after the backslash.
 */
const ESCAPE = new Uint8Array(128);
for (let c = 0; c < 0x20; c++) ESCAPE[c] = 0x75;
ESCAPE[0x08] = 0x62; // \b
ESCAPE[0x09] = 0x74; // \t
ESCAPE[0x0a] = 0x6e; // \n
ESCAPE[0x0c] = 0x66; // \f
ESCAPE[0x0d] = 0x72; // \r
ESCAPE[QUOTE] = QUOTE;
ESCAPE[BACKSLASH] = BACKSLASH;

/** `\uXXXX` with upper-case hex at b[p]; returns the position after it. */
function unicodeEscape(b: Buffer, p: number, c: number): number {
  b[p] = BACKSLASH;
  b[p + 1] = 0x75;
  b[p + 2] = HEX.charCodeAt(c >> 12);
  b[p + 3] = HEX.charCodeAt((c >> 8) & 15);
  b[p + 4] = HEX.charCodeAt((c >> 4) & 15);
  b[p + 5] = HEX.charCodeAt(c & 15);
  return p + 6;
}

/**
 * The characters of s, escaped, at b[p] (no quotes); returns the position after them.
 * The caller has reserved 6 bytes per UTF-16 unit, or the exact jsonStringLength.
 */
function writeEscaped(b: Buffer, p: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      const e = ESCAPE[c];
      if (e === 0) {
        b[p++] = c;
      } else if (e === 0x75) {
        p = unicodeEscape(b, p, c);
      } else {
        b[p++] = BACKSLASH;
        b[p++] = e;
      }
    } else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6);
      b[p++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c >= 0xe000) {
      b[p++] = 0xe0 | (c >> 12);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    } else {
      const d = c < 0xdc00 && i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d < 0xe000) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        b[p++] = 0xf0 | (cp >> 18);
        b[p++] = 0x80 | ((cp >> 12) & 0x3f);
        b[p++] = 0x80 | ((cp >> 6) & 0x3f);
        b[p++] = 0x80 | (cp & 0x3f);
        i++;
      } else {
        p = unicodeEscape(b, p, c);
      }
    }
  }
  return p;
}

/** The exact number of bytes writeEscaped writes for s. */
function escapedLength(s: string): number {
  const n = s.length;
  let len = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      const e = ESCAPE[c];
      len += e === 0 ? 1 : e === 0x75 ? 6 : 2;
    } else if (c < 0x800) {
      len += 2;
    } else if (c < 0xd800 || c >= 0xe000) {
      len += 3;
    } else {
      const d = c < 0xdc00 && i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d < 0xe000) {
        len += 4;
        i++;
      } else {
        len += 6;
      }
    }
  }
  return len;
}

/** A JSON string literal's UTF-8 bytes, for constants written often (field names). */
export function jsonStringBytes(s: string): Buffer {
  const b = Buffer.allocUnsafe(escapedLength(s) + 2);
  b[0] = QUOTE;
  b[writeEscaped(b, 1, s)] = QUOTE;
  return b;
}

export class JsonByteOutput {
  /** The slab being written; `start` is where the current message begins. */
  buf: Buffer = EMPTY;
  pos = 0;
  start = 0;
  /** slabUse of `buf` (undefined for a slab grown past SLAB_SIZE). */
  private use: SlabUse | undefined;

  /** Whether a message is being written (between begin() and finish() or abandon()). */
  get busy(): boolean {
    return this.buf !== EMPTY;
  }

  /** Start a message in the shared slab's free rest (or a new slab). */
  begin(): void {
    if (freeSlab === null) {
      this.buf = newSlab();
      this.use = slabUse.get(this.buf.buffer);
      this.start = 0;
    } else {
      this.buf = freeSlab;
      this.use = freeUse;
      this.start = freeFrom;
      freeSlab = null;
    }
    this.pos = this.start;
  }

  /** The message written since begin(); the slab's rest goes back to the shared list. */
  finish(): Buffer {
    const buf = this.buf;
    const out = buf.subarray(this.start, this.pos);
    // A slab grown for one large message is left to that message alone.
    if (buf.length <= SLAB_SIZE) {
      freeSlab = buf;
      freeFrom = this.pos;
      freeUse = this.use;
      if (this.use !== undefined) this.use.live++;
    }
    this.buf = EMPTY;
    return out;
  }

  /** Drop the message being written (after an error): its bytes are free again. */
  abandon(): void {
    if (this.buf.length <= SLAB_SIZE) {
      freeSlab = this.buf;
      freeFrom = this.start;
      freeUse = this.use;
    }
    this.buf = EMPTY;
  }

  /** Make room for n more bytes. */
  reserve(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    const used = this.pos - this.start;
    const size = (used + n) * 2;
    const next = size <= SLAB_SIZE ? newSlab() : Buffer.allocUnsafeSlow(size);
    this.buf.copy(next, 0, this.start, this.pos);
    // Writers never come back to the slab left: once its messages are handed back it
    // can be reused.
    const use = this.use;
    if (use !== undefined) {
      use.left = true;
      if (use.live === 0) reuseSlab(this.buf.buffer);
    }
    this.buf = next;
    this.use = slabUse.get(next.buffer);
    this.start = 0;
    this.pos = used;
  }

  /** One byte (an ASCII punctuation character). */
  byte(c: number): void {
    this.reserve(1);
    this.buf[this.pos++] = c;
  }

  /** Bytes as they are: short constants by a loop (cheaper than a native call), long by set. */
  raw(bytes: Uint8Array): void {
    const n = bytes.length;
    this.reserve(n);
    const b = this.buf;
    let p = this.pos;
    if (n <= 32) {
      for (let i = 0; i < n; i++) b[p++] = bytes[i];
    } else {
      b.set(bytes, p);
      p += n;
    }
    this.pos = p;
  }

  /** Text known to be ASCII (number formats, bigint digits, null/true/false). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  null(): void {
    this.reserve(4);
    const b = this.buf;
    const p = this.pos;
    b[p] = 0x6e;
    b[p + 1] = 0x75;
    b[p + 2] = 0x6c;
    b[p + 3] = 0x6c;
    this.pos = p + 4;
  }

  boolean(v: boolean): void {
    this.ascii(v ? 'true' : 'false');
  }

  /** A safe integer (-0 included) in decimal, as String(n) prints it. */
  integer(n: number): void {
    this.reserve(17); // a sign and 2^53's 16 digits
    const b = this.buf;
    let p = this.pos;
    let v = n;
    if (v < 0) {
      b[p++] = 0x2d;
      v = -v;
    }
    let len = 1;
    while (len < 16 && v >= POW10[len]) len++;
    p += len;
    this.pos = p;
    do {
      const q = Math.floor(v / 10);
      b[--p] = 0x30 + (v - q * 10);
      v = q;
    } while (v > 0);
  }

  /** Any number as String(n) prints it (NaN for an invalid Date's day). */
  number(n: number): void {
    if (Number.isSafeInteger(n)) this.integer(n);
    else this.ascii(String(n));
  }

  /** A JSON string literal. */
  string(s: string): void {
    const n = s.length;
    if (n >= NATIVE_UTF8_FROM && !NEEDS_ESCAPE_OR_SURROGATE.test(s)) {
      // Nothing to escape and no surrogate: the literal is the string's plain UTF-8.
      this.reserve(n > COUNT_STRINGS_OVER ? Buffer.byteLength(s, 'utf8') + 2 : n * 3 + 2);
      const b = this.buf;
      b[this.pos] = QUOTE;
      const p = this.pos + 1 + b.write(s, this.pos + 1, 'utf8');
      b[p] = QUOTE;
      this.pos = p + 1;
      return;
    }
    this.reserve(n > COUNT_STRINGS_OVER ? escapedLength(s) + 2 : n * 6 + 2);
    const b = this.buf;
    b[this.pos] = QUOTE;
    const p = writeEscaped(b, this.pos + 1, s);
    b[p] = QUOTE;
    this.pos = p + 1;
  }

  /** Bytes as a base64 JSON string, with padding (as Jackson and Buffer write it). */
  base64(bytes: Uint8Array): void {
    const n = bytes.length;
    const len = Math.ceil(n / 3) * 4;
    this.reserve(len + 2);
    const b = this.buf;
    let p = this.pos;
    b[p++] = QUOTE;
    if (n > NATIVE_BASE64_OVER) {
      const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, n);
      const text = view.toString('base64');
      p += b.write(text, p, len, 'latin1');
    } else {
      let i = 0;
      for (; i + 2 < n; i += 3) {
        const w = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
        b[p++] = BASE64_CODES[w >> 18];
        b[p++] = BASE64_CODES[(w >> 12) & 63];
        b[p++] = BASE64_CODES[(w >> 6) & 63];
        b[p++] = BASE64_CODES[w & 63];
      }
      if (i < n) {
        const two = i + 1 < n;
        const w = (bytes[i] << 16) | (two ? bytes[i + 1] << 8 : 0);
        b[p++] = BASE64_CODES[w >> 18];
        b[p++] = BASE64_CODES[(w >> 12) & 63];
        b[p++] = two ? BASE64_CODES[(w >> 6) & 63] : 0x3d;
        b[p++] = 0x3d;
      }
    }
    b[p++] = QUOTE;
    this.pos = p;
  }
}
