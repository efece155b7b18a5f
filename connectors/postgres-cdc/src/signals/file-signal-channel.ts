/**
 * The file signal channel (Debezium's FileSignalChannel): `signal.file` holds one JSON
 * signal a line, {"id": ..., "type": ..., "data": {...}}. Each read takes every line
 * and empties the file before the signals are handled, as Debezium does, so a signal is
 * acted on at most once: a crash after the read loses the signals it took, and lines
 * appended between the read and the emptying are lost too (write a signal file in one
 * go, and not while a read may be under way, to avoid that). Blank lines are passed
 * over; a line that is not such a signal is logged and dropped ("Skipped signal due to
 * an error", Debezium's words). A missing file, or a directory, is no signal.
 *
 * The path is taken as given, relative paths from the worker's working directory (as
 * Debezium's java.io.File takes them from the JVM's).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Logger } from '../logger.ts';
import type { SignalChannelReader } from './external-signals.ts';
import type { SignalRecord } from './signal-table.ts';

export class FileSignalChannel implements SignalChannelReader {
  readonly name = 'file';

  constructor(
    private readonly path: string,
    private readonly log: Logger,
  ) {
    log.info(`Reading '${resolve(path)}' file for signals`);
  }

  async read(): Promise<SignalRecord[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') return [];
      throw new Error(`Failed to read signal file ${resolve(this.path)}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    if (text === '') return [];
    await writeFile(this.path, '');
    const signals: SignalRecord[] = [];
    for (const line of text.split(/\r?\n/)) {
      if (line.trim() === '') continue;
      const signal = signalOfLine(line);
      if (signal === null) {
        this.log.warn(
          `Skipped signal due to an error '${line}': it is not a JSON object with id, type and data`,
        );
        continue;
      }
      this.log.info(`Processing signal: ${signal.id}, ${signal.type}, ${signal.data}`);
      signals.push(signal);
    }
    return signals;
  }

  close(): void {}
}

/** The signal of a line; null when it is not JSON with id, type and data (all required, as in Debezium). */
export function signalOfLine(line: string): SignalRecord | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const { id, type, data } = parsed as Record<string, unknown>;
  if (id == null || type == null || data === undefined) return null;
  return { id: text(id), type: text(type), data: JSON.stringify(data) };
}

/** A JSON value as Jackson's asText() gives it: strings as they are, others as JSON. */
function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}
