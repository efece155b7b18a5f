/**
 * TLS to Postgres with libpq's `sslmode` semantics (Debezium passes the mode to pgjdbc,
 * which follows libpq):
 *   disable      never TLS
 *   allow        plain first; TLS only when the server refuses a plain connection
 *   prefer       TLS first (Debezium's default); plain only when the server has no TLS
 *   require      TLS, the certificate not checked; with database.sslrootcert given,
 *                checked as verify-ca (libpq does the same)
 *   verify-ca    TLS, the chain checked against database.sslrootcert, any host name
 *   verify-full  TLS, the chain and the host name checked
 * database.sslrootcert names a PEM file of trusted CAs, or `system` for the system's
 * store (libpq 16); by default libpq's ~/.postgresql/root.crt, which verify-* need
 * (missing, the connection is refused naming the key). database.sslcert / sslkey /
 * sslpassword give a client certificate. database.sslfactory (a Java class) is refused
 * by validation.
 *
 * allow and prefer need a first try to know what the server does, and node-postgres
 * decides TLS per connection before it connects. So the entry points (the start-up
 * check, a task's start, the status' external state, deleted()) call negotiateTls once;
 * its answer is kept per server and mode, and clientConfig's `ssl` follows it for every
 * later connection (queries, snapshot, replication). Without a negotiation prefer tries
 * TLS and allow plain, which is each mode's first choice.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';

export type SslMode = 'disable' | 'allow' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

export interface TlsSettings {
  host: string;
  port: number;
  sslmode: string;
  sslrootcert?: string | null;
  sslcert?: string | null;
  sslkey?: string | null;
  sslpassword?: string | null;
}

/** What allow and prefer found, per server and mode: true = TLS. */
const negotiated = new Map<string, boolean>();

const keyOf = (t: TlsSettings) => `${t.host}:${t.port}:${t.sslmode}`;

/** libpq's default root certificate file. */
export const DEFAULT_ROOT_CERT = join(homedir(), '.postgresql', 'root.crt');

function readPem(path: string, key: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(
      `${key}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

/** The node TLS options of a TLS connection in `mode` (not for disable/allow-plain). */
function tlsConnection(t: TlsSettings, verify: 'none' | 'ca' | 'full'): ConnectionOptions {
  const options: ConnectionOptions = { rejectUnauthorized: verify !== 'none' };
  if (verify !== 'none') {
    const root = t.sslrootcert || DEFAULT_ROOT_CERT;
    if (root !== 'system') {
      options.ca = readPem(
        root,
        t.sslrootcert
          ? 'database.sslrootcert'
          : `database.sslmode=${t.sslmode} needs database.sslrootcert (libpq's default ${DEFAULT_ROOT_CERT} is missing)`,
      );
    }
    // verify-ca checks the chain only, as libpq: any host name is accepted.
    if (verify === 'ca') options.checkServerIdentity = () => undefined;
  }
  if (t.sslcert) options.cert = readPem(t.sslcert, 'database.sslcert');
  if (t.sslkey) options.key = readPem(t.sslkey, 'database.sslkey');
  if (t.sslpassword) options.passphrase = t.sslpassword;
  return options;
}

/** node-postgres's `ssl` for this mode, after negotiateTls where the mode needs one. */
export function sslOption(t: TlsSettings): false | ConnectionOptions {
  switch (t.sslmode as SslMode) {
    case 'disable':
      return false;
    case 'allow':
      return negotiated.get(keyOf(t)) === true ? tlsConnection(t, 'none') : false;
    case 'prefer':
      return negotiated.get(keyOf(t)) === false ? false : tlsConnection(t, 'none');
    case 'require':
      return tlsConnection(t, t.sslrootcert ? 'ca' : 'none');
    case 'verify-ca':
      return tlsConnection(t, 'ca');
    case 'verify-full':
      return tlsConnection(t, 'full');
    default:
      throw new Error(`database.sslmode=${t.sslmode} is not a libpq sslmode`);
  }
}

/** The server refused TLS (it answered 'N' to SSLRequest). */
function noTlsOnServer(error: unknown): boolean {
  return /does not support SSL/i.test((error as Error)?.message ?? '');
}

/** The server refused a plain connection (pg_hba.conf has only hostssl for us). */
function plainRefused(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '28000' && /no encryption/i.test(e.message ?? '');
}

async function tryConnect(config: pg.ClientConfig): Promise<void> {
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * For allow and prefer: find out, with one connection (two when the first choice is
 * refused), whether this server takes TLS, and keep the answer for clientConfig. Other
 * modes need no try. Errors other than the refusals go to the caller as they are.
 */
export async function negotiateTls(t: TlsSettings, config: pg.ClientConfig): Promise<void> {
  const mode = t.sslmode as SslMode;
  if (mode !== 'allow' && mode !== 'prefer') return;
  const key = keyOf(t);
  const first = mode === 'prefer';
  negotiated.set(key, first);
  try {
    await tryConnect({ ...config, ssl: sslOption(t) });
  } catch (error) {
    if (first ? !noTlsOnServer(error) : !plainRefused(error)) throw error;
    negotiated.set(key, !first);
  }
}

/** Whether connections to this server use TLS now (for logs and tests). */
export function usesTls(t: TlsSettings): boolean {
  return sslOption(t) !== false;
}
