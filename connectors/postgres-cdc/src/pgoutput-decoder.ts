/**
 * Decoder of pgoutput's logical replication messages (protocol version 1), the
 * payload of each XLogData frame of a logical replication stream.
 *
 * Format (https://www.postgresql.org/docs/current/protocol-logicalrep-message-formats.html),
 * all integers big-endian, strings NUL-terminated UTF-8:
 *   B  Begin     final_lsn int64, commit_ts int64 (µs since 2000-01-01), xid int32
 *   C  Commit    flags int8, commit_lsn int64, end_lsn int64, commit_ts int64
 *   O  Origin    origin_lsn int64, name string
 *   R  Relation  oid int32, namespace string, name string, replica_identity int8,
 *                ncols int16, ncols × (flags int8 [1 = key], name string, type oid int32, typmod int32)
 *   Y  Type      oid int32, namespace string, name string
 *   I  Insert    oid int32, 'N' tuple
 *   U  Update    oid int32, ['K' key tuple | 'O' old tuple], 'N' tuple
 *   D  Delete    oid int32, 'K' key tuple | 'O' old tuple
 *   T  Truncate  nrels int32, options int8 (1 cascade, 2 restart identity), nrels × oid int32
 *   M  Message   flags int8 (1 transactional), lsn int64, prefix string, length int32, bytes
 *   tuple        ncols int16, ncols × ('n' null | 'u' unchanged TOAST | 't' int32 length + text)
 *
 * Column values stay as the text Postgres sent (type-mapping turns them into Connect
 * values): decoding does no per-type work, which keeps it at memory speed. Stateless:
 * relation bookkeeping belongs to the caller (the table-schema registry), since a
 * Relation message must reach it anyway. Malformed input throws a PgoutputFormatError.
 */
import { type Lsn, readLsn } from './lsn.ts';

/** Marks a TOASTed column that Postgres did not send because it did not change. */
export const UNCHANGED_TOAST: unique symbol = Symbol('unchanged-toast');
export type ColumnValue = string | null | typeof UNCHANGED_TOAST;
export type Tuple = ColumnValue[];

/** Microseconds between 1970-01-01 and 2000-01-01, Postgres' epoch. */
const PG_EPOCH_MICROS = 946_684_800_000_000;

export interface RelationColumn {
  name: string;
  typeOid: number;
  typeMod: number;
  /** Part of the replica identity (the primary key by default). */
  isKey: boolean;
}

export type ReplicaIdentity = 'default' | 'nothing' | 'full' | 'index';

export type PgoutputMessage =
  | { tag: 'begin'; finalLsn: Lsn; commitTimeMicros: number; xid: number }
  | { tag: 'commit'; flags: number; commitLsn: Lsn; endLsn: Lsn; commitTimeMicros: number }
  | { tag: 'origin'; originLsn: Lsn; name: string }
  | {
      tag: 'relation';
      relationOid: number;
      schema: string;
      name: string;
      replicaIdentity: ReplicaIdentity;
      columns: RelationColumn[];
    }
  | { tag: 'type'; typeOid: number; schema: string; name: string }
  | { tag: 'insert'; relationOid: number; after: Tuple }
  | {
      tag: 'update';
      relationOid: number;
      /** Set when the key changed ('K') or under REPLICA IDENTITY FULL ('O'). */
      before: Tuple | null;
      beforeIsKeyOnly: boolean;
      after: Tuple;
    }
  | { tag: 'delete'; relationOid: number; before: Tuple; beforeIsKeyOnly: boolean }
  | { tag: 'truncate'; relationOids: number[]; cascade: boolean; restartIdentity: boolean }
  | { tag: 'message'; transactional: boolean; lsn: Lsn; prefix: string; content: Buffer };

export class PgoutputFormatError extends Error {
  readonly kind = 'pgoutput-format';
  constructor(message: string) {
    super(`Malformed pgoutput message: ${message}`);
    this.name = 'PgoutputFormatError';
  }
}

const IDENTITY: Record<number, ReplicaIdentity> = {
  100: 'default',
  110: 'nothing',
  102: 'full',
  105: 'index',
};

/**
 * A cursor over one message. Reads past the end throw through Buffer's own bounds
 * checks (RangeError), turned into PgoutputFormatError by decode().
 */
class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
  ) {
    this.pos = start;
  }
  u8(): number {
    return this.buf[this.pos++] ?? this.short();
  }
  i16(): number {
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  i32(): number {
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  u32(): number {
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  lsn(): Lsn {
    const v = readLsn(this.buf, this.pos);
    this.pos += 8;
    return v;
  }
  timestampMicros(): number {
    const v = this.buf.readInt32BE(this.pos) * 0x1_0000_0000 + this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    return v + PG_EPOCH_MICROS;
  }
  string(): string {
    const end = this.buf.indexOf(0, this.pos);
    if (end < 0) throw new PgoutputFormatError('unterminated string');
    const s = this.buf.toString('utf8', this.pos, end);
    this.pos = end + 1;
    return s;
  }
  tuple(): Tuple {
    const buf = this.buf;
    const n = this.i16();
    const values: Tuple = new Array(n);
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const kind = buf[pos++];
      if (kind === 0x74 /* t */) {
        const len = buf.readInt32BE(pos);
        pos += 4;
        if (pos + len > buf.length) this.short();
        values[i] = buf.toString('utf8', pos, pos + len);
        pos += len;
      } else if (kind === 0x6e /* n */) {
        values[i] = null;
      } else if (kind === 0x75 /* u */) {
        values[i] = UNCHANGED_TOAST;
      } else if (kind === 0x62 /* b */) {
        throw new PgoutputFormatError('binary tuple data was not requested');
      } else {
        if (kind === undefined) this.short();
        throw new PgoutputFormatError(`unknown tuple column kind 0x${kind.toString(16)}`);
      }
    }
    this.pos = pos;
    return values;
  }
  short(): never {
    throw new PgoutputFormatError(`message ends early at byte ${this.pos}`);
  }
}

/** Decode the pgoutput message that starts at `start` in `buf` (an XLogData payload). */
export function decodePgoutput(buf: Buffer, start = 0): PgoutputMessage {
  try {
    return decode(new Reader(buf, start));
  } catch (error) {
    if (error instanceof PgoutputFormatError) throw error;
    if (error instanceof RangeError) throw new PgoutputFormatError('message ends early');
    throw error;
  }
}

function decode(r: Reader): PgoutputMessage {
  const tag = r.u8();
  switch (tag) {
    case 0x49 /* I */:
      {
        const relationOid = r.u32();
        expect(r, 0x4e);
        return { tag: 'insert', relationOid, after: r.tuple() };
      }
    case 0x55 /* U */:
      {
        const relationOid = r.u32();
        let kind = r.u8();
        let before: Tuple | null = null;
        const beforeIsKeyOnly = kind === 0x4b;
        if (kind === 0x4b /* K */ || kind === 0x4f /* O */) {
          before = r.tuple();
          kind = r.u8();
        }
        if (kind !== 0x4e)
          throw new PgoutputFormatError(`update without new tuple (0x${kind.toString(16)})`);
        return { tag: 'update', relationOid, before, beforeIsKeyOnly, after: r.tuple() };
      }
    case 0x44 /* D */:
      {
        const relationOid = r.u32();
        const kind = r.u8();
        if (kind !== 0x4b && kind !== 0x4f)
          throw new PgoutputFormatError(`delete without old tuple (0x${kind.toString(16)})`);
        return { tag: 'delete', relationOid, beforeIsKeyOnly: kind === 0x4b, before: r.tuple() };
      }
    case 0x42 /* B */:
      return {
        tag: 'begin',
        finalLsn: r.lsn(),
        commitTimeMicros: r.timestampMicros(),
        xid: r.u32(),
      };
    case 0x43 /* C */:
      return {
        tag: 'commit',
        flags: r.u8(),
        commitLsn: r.lsn(),
        endLsn: r.lsn(),
        commitTimeMicros: r.timestampMicros(),
      };
    case 0x52 /* R */:
      {
        const relationOid = r.u32();
        const schema = r.string();
        const name = r.string();
        const identityByte = r.u8();
        const replicaIdentity = IDENTITY[identityByte];
        if (!replicaIdentity)
          throw new PgoutputFormatError(`unknown replica identity ${identityByte}`);
        const n = r.i16();
        const columns: RelationColumn[] = [];
        for (let i = 0; i < n; i++) {
          const flags = r.u8();
          columns.push({
            isKey: (flags & 1) === 1,
            name: r.string(),
            typeOid: r.u32(),
            typeMod: r.i32(),
          });
        }
        return { tag: 'relation', relationOid, schema, name, replicaIdentity, columns };
      }
    case 0x59 /* Y */:
      return { tag: 'type', typeOid: r.u32(), schema: r.string(), name: r.string() };
    case 0x4f /* O */:
      return { tag: 'origin', originLsn: r.lsn(), name: r.string() };
    case 0x54 /* T */:
      {
        const n = r.i32();
        const options = r.u8();
        const relationOids: number[] = [];
        for (let i = 0; i < n; i++) relationOids.push(r.u32());
        return {
          tag: 'truncate',
          relationOids,
          cascade: (options & 1) !== 0,
          restartIdentity: (options & 2) !== 0,
        };
      }
    case 0x4d /* M */:
      {
        const flags = r.u8();
        const lsn = r.lsn();
        const prefix = r.string();
        const length = r.i32();
        if (r.pos + length > r.buf.length) r.short();
        // Copied: the frame buffer belongs to the socket reader and is reused.
        const content = Buffer.from(r.buf.subarray(r.pos, r.pos + length));
        r.pos += length;
        return { tag: 'message', transactional: (flags & 1) !== 0, lsn, prefix, content };
      }
    default:
      throw new PgoutputFormatError(`unknown message type 0x${tag.toString(16)}`);
  }
}

function expect(r: Reader, byte: number): void {
  const got = r.u8();
  if (got !== byte)
    throw new PgoutputFormatError(`expected 0x${byte.toString(16)}, got 0x${got.toString(16)}`);
}
