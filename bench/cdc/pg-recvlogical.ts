/**
 * pg_recvlogical, the limit the CDC benches measure against: decodes a slot with
 * pgoutput to /dev/null up to an end LSN. PG_RECVLOGICAL names the binary.
 */
import { spawn } from 'node:child_process';

const RECVLOGICAL = process.env.PG_RECVLOGICAL ?? '/usr/bin/pg_recvlogical';

export interface RecvlogicalTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  slot: string;
  publication: string;
}

/** Seconds pg_recvlogical took to decode `target.slot` up to `endLsn` (text form, e.g. 0/16B3748). */
export function recvlogicalSeconds(target: RecvlogicalTarget, endLsn: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      RECVLOGICAL,
      [
        '-d',
        `host=${target.host} port=${target.port} user=${target.user} dbname=${target.database}`,
        '--slot',
        target.slot,
        '--start',
        '--no-loop',
        '-f',
        '/dev/null',
        '-E',
        endLsn,
        '-o',
        'proto_version=1',
        '-o',
        `publication_names=${target.publication}`,
      ],
      {
        env: { ...process.env, PGPASSWORD: target.password },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve((performance.now() - started) / 1000)
        : reject(new Error(`pg_recvlogical exited ${code}: ${err}`)),
    );
  });
}
