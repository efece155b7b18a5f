/**
 * Log sequence numbers (LSNs): byte positions in Postgres' write-ahead log.
 *
 * Postgres prints an LSN as two hex halves, `16/B374D848`. Here an LSN is a plain
 * number (hi * 2^32 + lo): exact up to 2^53 bytes (8 PiB of WAL written over the life
 * of a cluster), cheaper than bigint on the per-message path, and the same shape
 * Debezium stores in its offsets (a long). Anything larger is refused, not rounded.
 */

export type Lsn = number;

const TWO_32 = 0x1_0000_0000;

export function parseLsn(text: string): Lsn {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) throw new Error(`not an LSN: ${JSON.stringify(text)}`);
  return checked(Number.parseInt(match[1], 16) * TWO_32 + Number.parseInt(match[2], 16));
}

export function formatLsn(lsn: Lsn): string {
  const hi = Math.floor(lsn / TWO_32);
  const lo = lsn - hi * TWO_32;
  return `${hi.toString(16).toUpperCase()}/${lo.toString(16).toUpperCase()}`;
}

/** Read a big-endian 64-bit LSN (or any unsigned 64-bit count) at `offset`. */
export function readLsn(buf: Buffer, offset: number): Lsn {
  return checked(buf.readUInt32BE(offset) * TWO_32 + buf.readUInt32BE(offset + 4));
}

export function writeLsn(buf: Buffer, lsn: Lsn, offset: number): void {
  const hi = Math.floor(lsn / TWO_32);
  buf.writeUInt32BE(hi, offset);
  buf.writeUInt32BE(lsn - hi * TWO_32, offset + 4);
}

function checked(lsn: number): Lsn {
  if (!Number.isSafeInteger(lsn)) throw new Error(`LSN beyond 2^53 is not supported: ${lsn}`);
  return lsn;
}
