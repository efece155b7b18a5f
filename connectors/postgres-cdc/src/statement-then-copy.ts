/**
 * One round trip for an incremental snapshot chunk (incremental-snapshot.ts): a
 * statement, then a `COPY (...) TO STDOUT`, as two simple Query messages written
 * together, without waiting for the first one's answer in between.
 *
 * Why it is safe: the server answers the Query messages of a connection one after the
 * other, each in its own implicit transaction. The first one (the watermark inserts)
 * has committed before the second one (the chunk's COPY) takes its snapshot, exactly
 * as if the client had waited for the first answer: DBLog needs the open watermark
 * committed before the chunk is read.
 *
 * On the wire (protocol-flow.html, "Simple Query" and "COPY Operations"), after the
 * two Query messages the server sends:
 *   statement   CommandComplete ('C') per statement, or ErrorResponse ('E'); then
 *               ReadyForQuery ('Z')
 *   copy        CopyOutResponse ('H'), CopyData ('d')..., CopyDone ('c'),
 *               CommandComplete, ReadyForQuery; or ErrorResponse, ReadyForQuery
 * node-postgres knows of one query only, this one: from submit() until the CopyDone
 * the bytes of the connection come here (its 'data' listener is set aside, as
 * pg-copy-streams does), and the copy's CommandComplete and ReadyForQuery, or its
 * ErrorResponse, go back to node-postgres' parser, which then finishes the query
 * (handleReadyForQuery / handleError below). The statement's answers never reach it.
 * NoticeResponse, ParameterStatus and NotificationResponse may come between any of
 * these; they are dropped while the bytes are here.
 *
 * A failed statement: the server still runs the COPY; its rows are dropped and the
 * query fails with the statement's error once the copy is over, so node-postgres and
 * the server agree where the connection is (a failed statement that opened a
 * transaction block leaves it aborted, as any simple query would).
 *
 * The rows are collected whole (a chunk is bounded): no back-pressure. Used by the
 * incremental snapshot's loop on its own connection; queued like any node-postgres
 * query (client.query(it), then await `done`).
 */
import type pg from 'pg';
import type { CopyTextParser } from './copy-text-parser.ts';
import type { ColumnValue } from './pgoutput-decoder.ts';

const ERROR_RESPONSE = 0x45; // 'E'
const READY_FOR_QUERY = 0x5a; // 'Z'
const COPY_DATA = 0x64; // 'd'
const COPY_DONE = 0x63; // 'c'

type DataListener = (chunk: Buffer) => void;

export class StatementThenCopy implements pg.Submittable {
  private pending: Buffer = Buffer.alloc(0);
  private inCopy = false;
  private statementError: Error | null = null;
  private copyError: Error | null = null;
  private pgData: DataListener | null = null;
  private stream: pg.Connection['stream'] | null = null;
  private readonly rows: ColumnValue[][] = [];
  private settle: { resolve(rows: ColumnValue[][]): void; reject(e: Error): void } | null = null;
  /** The copy's rows, once node-postgres has the connection back. */
  readonly done: Promise<ColumnValue[][]>;

  /**
   * @param statement SQL without results to speak of (its CommandCompletes are dropped);
   *   null: the copy alone (read-only incremental chunks, inside their transaction)
   * @param copy a `COPY (...) TO STDOUT` in text format, its data fed to `parser`
   */
  constructor(
    private readonly statement: string | null,
    private readonly copy: string,
    private readonly parser: CopyTextParser,
  ) {
    this.inCopy = statement === null;
    this.done = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  submit(connection: pg.Connection): void {
    const stream = connection.stream;
    const listeners = stream.listeners('data') as DataListener[];
    if (listeners.length !== 1)
      throw new Error(`invariant: ${listeners.length} data listeners on the connection`);
    this.pgData = listeners[0];
    this.stream = stream;
    stream.removeListener('data', this.pgData);
    stream.on('data', this.onData);
    // One write for both messages.
    stream.cork();
    if (this.statement !== null) connection.query(this.statement);
    connection.query(this.copy);
    stream.uncork();
  }

  private readonly onData = (chunk: Buffer): void => {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    // A CopyData message per row: their bodies go to the parser together, once per read.
    const data: Buffer[] = [];
    let at = 0;
    while (buf.length - at >= 5) {
      const code = buf[at];
      const end = at + 1 + buf.readUInt32BE(at + 1);
      if (this.inCopy && code === ERROR_RESPONSE) {
        // node-postgres reads the copy's error (and the ReadyForQuery after it) itself.
        this.onCopyData(data);
        this.handBack(buf.subarray(at));
        return;
      }
      if (buf.length < end) break;
      const body = buf.subarray(at + 5, end);
      at = end;
      if (!this.inCopy) {
        if (code === ERROR_RESPONSE) this.statementError ??= errorOf(body);
        else if (code === READY_FOR_QUERY) this.inCopy = true;
        continue;
      }
      if (code === COPY_DATA) data.push(body);
      else if (code === COPY_DONE) {
        this.onCopyData(data);
        this.handBack(buf.subarray(at));
        return;
      }
    }
    this.onCopyData(data);
    buf = buf.subarray(at);
    // A copy of the rest: `chunk` belongs to the socket's reader.
    this.pending = buf.length > 0 ? Buffer.from(buf) : Buffer.alloc(0);
  };

  private onCopyData(data: Buffer[]): void {
    if (data.length === 0 || this.statementError || this.copyError) return;
    try {
      this.parser.push(data.length === 1 ? data[0] : Buffer.concat(data));
      for (let row = this.parser.nextRow(); row !== null; row = this.parser.nextRow())
        this.rows.push(row);
    } catch (e) {
      this.copyError = e instanceof Error ? e : new Error(String(e));
    }
  }

  /** Gives the connection's bytes back to node-postgres, `rest` first. */
  private handBack(rest: Buffer): void {
    const stream = this.stream as pg.Connection['stream'];
    const pgData = this.pgData as DataListener;
    stream.removeListener('data', this.onData);
    stream.on('data', pgData);
    this.pending = Buffer.alloc(0);
    if (rest.length > 0) pgData(rest);
  }

  handleReadyForQuery(): void {
    const error = this.statementError ?? this.copyError;
    if (error) {
      this.settle?.reject(error);
      return;
    }
    try {
      this.parser.end();
      this.settle?.resolve(this.rows);
    } catch (e) {
      this.settle?.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** The copy's error from node-postgres, or the connection's. */
  handleError(error: Error): void {
    // Not the connection's yet: the error came while the bytes were here.
    if (this.stream && this.pgData && this.stream.listeners('data').includes(this.onData))
      this.handBack(Buffer.alloc(0));
    this.settle?.reject(this.statementError ?? error);
    this.settle = null;
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}

/** An ErrorResponse's fields (a code byte, then text, each ended by a zero byte). */
function errorOf(body: Buffer): Error {
  const fields = new Map<string, string>();
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const end = body.indexOf(0, at + 1);
    if (end < 0) break;
    fields.set(String.fromCharCode(body[at]), body.toString('utf8', at + 1, end));
    at = end + 1;
  }
  const error = new Error(fields.get('M') ?? 'the server refused the statement') as Error & {
    code?: string;
  };
  error.code = fields.get('C');
  return error;
}
