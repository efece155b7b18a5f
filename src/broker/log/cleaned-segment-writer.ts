/**
 * The `.log.cleaned` output of one segment being cleaned (cleaner.ts): created only
 * once a batch changes, so a segment that cleaning leaves as it was costs no write.
 * The unchanged prefix before the first change is copied from the segment in chunks,
 * then kept and rewritten batches follow; output is flushed every few megabytes, so
 * memory stays bounded whatever the segment size. `finish` fsyncs and closes;
 * `abandon` removes the file. Used on the broker thread by one cleaning at a time.
 */
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import type { LogSegment } from './segment.ts';

const FLUSH_BYTES = 4 * 1024 * 1024;

/**
 * The `.log.cleaned` file of one segment, created only once a batch changes. Output is
 * copied into one buffer and written when it fills: the batches it is given are views
 * of the segment's read chunk, which the next chunk overwrites (forEachBatch).
 */
export class CleanedSegmentWriter {
  private fd: number | undefined;
  private out: Buffer | undefined;
  private used = 0;
  private written = 0;

  constructor(
    private readonly segment: LogSegment,
    private readonly path: string,
  ) {}

  /** An unchanged batch. Before the first change it needs no copy: change() copies the prefix. */
  keep(batch: Buffer): void {
    if (this.fd !== undefined) this.push(batch);
  }

  /** The batch at `filePosition` changes: from here on the output differs from the segment. */
  change(filePosition: number): void {
    if (this.fd !== undefined) return;
    this.fd = openSync(this.path, 'w');
    const out = Buffer.allocUnsafeSlow(FLUSH_BYTES);
    this.out = out;
    for (let pos = 0; pos < filePosition; ) {
      const read = this.segment.readInto(out, pos, Math.min(out.length, filePosition - pos));
      if (read.length === 0) throw new Error(`segment ${this.path} ends before byte ${pos}`);
      this.used = read.length;
      this.flush();
      pos += read.length;
    }
  }

  push(bytes: Buffer): void {
    const out = this.out!;
    if (this.used + bytes.length > out.length) this.flush();
    if (bytes.length > out.length) {
      this.write(bytes);
      return;
    }
    bytes.copy(out, this.used);
    this.used += bytes.length;
  }

  /** Bytes written (file fsynced and closed), or undefined when nothing changed. */
  finish(): number | undefined {
    if (this.fd === undefined) return undefined;
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
    return this.written;
  }

  abandon(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }

  private flush(): void {
    this.write(this.out!.subarray(0, this.used));
    this.used = 0;
  }

  private write(bytes: Buffer): void {
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd!, bytes, done, bytes.length - done);
    this.written += bytes.length;
  }
}
