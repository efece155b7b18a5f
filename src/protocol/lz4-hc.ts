/**
 * An LZ4 frame encoder with levels (KIP-390's compression.lz4.level, 1–17), for the
 * levels other than Kafka's default 9 (which is LZ4's fast mode, lz4-napi, as in Kafka).
 * No npm package writes LZ4 at levels on Node 20 (see compress() in compression.ts), so
 * the level path is this one.
 *
 * Output: one LZ4 frame as Kafka's KafkaLZ4BlockOutputStream writes it (the format
 * every reader of Kafka's lz4 codec accepts): version 01, independent blocks of at
 * most 64 KiB, no block or content checksum, no content size, end mark. A block that
 * does not shrink is stored raw (the block size's high bit).
 *
 * Blocks: LZ4's block format (token, literal run, 16-bit offset, match length), with
 * lz4hc's hash-chain match finder: every position is chained to the previous one with
 * the same first four bytes, and a match is the longest of the first `attempts`
 * candidates within 64 KiB back. The level sets `attempts` as lz4hc's table does for
 * levels 1–9 (2 … 256); lz4hc's optimal parser for 10–12 is not implemented, those
 * levels search deeper chains instead (512, 1024, 4096), and 13–17 count as 12, as in
 * lz4-java. Matches are taken greedily (no lazy evaluation), so at a given level the
 * output can be a little larger than lz4hc's; it is always valid LZ4 and decodes to
 * the input.
 */

const MAGIC = 0x184d2204;
/** FLG: version 01, independent blocks; BD: 64 KiB maximum block size. */
const FLG = 0x60;
const BD = 0x40;
const BLOCK_BYTES = 64 * 1024;
const UNCOMPRESSED_BLOCK = 0x80000000;

const MIN_MATCH = 4;
/** The last five bytes of a block are always literals, and no match starts in its last 12. */
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_DISTANCE = 65_535;
const HASH_LOG = 15;

export const LZ4_MIN_LEVEL = 1;
export const LZ4_MAX_LEVEL = 17;

/** Candidates a position's search looks at, by level (1-based; 13–17 count as 12). */
const ATTEMPTS = [2, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096];

export function lz4FrameAtLevel(data: Buffer, level: number): Buffer {
  if (!Number.isInteger(level) || level < LZ4_MIN_LEVEL || level > LZ4_MAX_LEVEL)
    throw new RangeError(`lz4 level ${level}: must be between 1 and 17`);
  const attempts = ATTEMPTS[Math.min(level, 12) - 1]!;
  const blocks = Math.ceil(data.length / BLOCK_BYTES);
  // Worst case: every block raw, with its size field; header 7, end mark 4.
  const out = Buffer.allocUnsafe(7 + data.length + 4 * blocks + 4);
  out.writeUInt32LE(MAGIC, 0);
  out[4] = FLG;
  out[5] = BD;
  out[6] = (xxh32Short(out, 4, 2) >>> 8) & 0xff;
  let op = 7;
  const scratch = Buffer.allocUnsafe(blockBound(BLOCK_BYTES));
  const finder = new MatchFinder();
  for (let start = 0; start < data.length; start += BLOCK_BYTES) {
    const end = Math.min(start + BLOCK_BYTES, data.length);
    const size = compressBlock(data, start, end, scratch, attempts, finder);
    if (size < end - start) {
      out.writeUInt32LE(size, op);
      scratch.copy(out, op + 4, 0, size);
      op += 4 + size;
    } else {
      out.writeUInt32LE((UNCOMPRESSED_BLOCK | (end - start)) >>> 0, op);
      data.copy(out, op + 4, start, end);
      op += 4 + (end - start);
    }
  }
  out.writeUInt32LE(0, op);
  return out.subarray(0, op + 4);
}

/** The largest a block of `n` bytes can become (literal run lengths and a token). */
function blockBound(n: number): number {
  return n + Math.ceil(n / 255) + 16;
}

class MatchFinder {
  readonly heads = new Int32Array(1 << HASH_LOG);
  /** Distance back to the previous position with the same hash (0: none), by position mod 64 KiB. */
  readonly chain = new Uint16Array(1 << 16);
}

function hash4(src: Buffer, at: number): number {
  return Math.imul(src.readUInt32LE(at), 2654435761) >>> (32 - HASH_LOG);
}

/** Compresses src[start, end) into out from 0; returns the bytes written. */
function compressBlock(
  src: Buffer,
  start: number,
  end: number,
  out: Buffer,
  attempts: number,
  finder: MatchFinder,
): number {
  const { heads, chain } = finder;
  heads.fill(-1);
  let op = 0;
  let anchor = start;
  const matchLimit = end - LAST_LITERALS;
  const lastMatchStart = end - MF_LIMIT;
  let inserted = start;
  let ip = start;
  while (ip <= lastMatchStart) {
    // Chain every position before ip, then search ip's candidates.
    for (; inserted < ip; inserted++) {
      const h = hash4(src, inserted);
      const prev = heads[h]!;
      const back = prev < 0 ? 0 : inserted - prev;
      chain[inserted & 0xffff] = back > MAX_DISTANCE ? 0 : back;
      heads[h] = inserted;
    }
    let bestLength = 0;
    let bestAt = -1;
    const first = src.readUInt32LE(ip);
    let candidate = heads[hash4(src, ip)]!;
    for (let n = attempts; n > 0 && candidate >= start && ip - candidate <= MAX_DISTANCE; n--) {
      // A longer match must differ from the best at its end: check that byte first.
      if (
        (bestLength === 0 ||
          (ip + bestLength < matchLimit && src[candidate + bestLength] === src[ip + bestLength])) &&
        src.readUInt32LE(candidate) === first
      ) {
        let length = MIN_MATCH;
        while (ip + length < matchLimit && src[candidate + length] === src[ip + length]) length++;
        if (length > bestLength) {
          bestLength = length;
          bestAt = candidate;
        }
      }
      const back = chain[candidate & 0xffff]!;
      if (back === 0) break;
      candidate -= back;
    }
    if (bestLength < MIN_MATCH) {
      ip++;
      continue;
    }
    op = writeSequence(src, anchor, ip - anchor, out, op, ip - bestAt, bestLength);
    ip += bestLength;
    anchor = ip;
  }
  return writeLastLiterals(src, anchor, end - anchor, out, op);
}

function writeLength(out: Buffer, op: number, rest: number): number {
  let left = rest;
  while (left >= 255) {
    out[op++] = 255;
    left -= 255;
  }
  out[op++] = left;
  return op;
}

function writeSequence(
  src: Buffer,
  literalsAt: number,
  literals: number,
  out: Buffer,
  at: number,
  offset: number,
  matchLength: number,
): number {
  const tokenAt = at;
  let op = at + 1;
  let token = 0;
  if (literals >= 15) {
    token = 0xf0;
    op = writeLength(out, op, literals - 15);
  } else token = literals << 4;
  src.copy(out, op, literalsAt, literalsAt + literals);
  op += literals;
  out[op++] = offset & 0xff;
  out[op++] = offset >>> 8;
  const extra = matchLength - MIN_MATCH;
  if (extra >= 15) {
    token |= 0x0f;
    op = writeLength(out, op, extra - 15);
  } else token |= extra;
  out[tokenAt] = token;
  return op;
}

function writeLastLiterals(
  src: Buffer,
  literalsAt: number,
  literals: number,
  out: Buffer,
  at: number,
): number {
  let op = at + 1;
  if (literals >= 15) {
    out[at] = 0xf0;
    op = writeLength(out, op, literals - 15);
  } else out[at] = literals << 4;
  src.copy(out, op, literalsAt, literalsAt + literals);
  return op + literals;
}

const PRIME1 = 2654435761;
const PRIME2 = 2246822519;
const PRIME3 = 3266489917;
const PRIME4 = 668265263;
const PRIME5 = 374761393;

/** XXH32 with seed 0 of fewer than 16 bytes: the frame descriptor's checksum. */
export function xxh32Short(buf: Buffer, at: number, length: number): number {
  if (length >= 16) throw new RangeError('xxh32Short: fewer than 16 bytes only');
  let h = (PRIME5 + length) >>> 0;
  let p = at;
  const end = at + length;
  for (; p + 4 <= end; p += 4) {
    h = (h + Math.imul(buf.readUInt32LE(p), PRIME3)) >>> 0;
    h = Math.imul(rotl(h, 17), PRIME4) >>> 0;
  }
  for (; p < end; p++) {
    h = (h + Math.imul(buf[p]!, PRIME5)) >>> 0;
    h = Math.imul(rotl(h, 11), PRIME1) >>> 0;
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME2) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, PRIME3) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

function rotl(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}
