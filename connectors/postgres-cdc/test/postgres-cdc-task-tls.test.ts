/**
 * TLS to Postgres with libpq's sslmode semantics, against a private Postgres with
 * ssl=on and a CA this test makes with openssl (the server certificate names only
 * DNS:localhost, so connecting to 127.0.0.1 tells verify-ca from verify-full):
 *   prefer       TLS on every connection, snapshot and streaming (before: never TLS)
 *   verify-ca    works with the right CA, refused with a wrong one
 *   verify-full  refused for a host name the certificate does not name
 * and prefer against a server without TLS falls back to plain.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfigOrThrow } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { postgresCdcConfigDefs, readSettings } from '../src/connector-config.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { checkDatabase, clientConfig } from '../src/startup-check.ts';
import { usesTls } from '../src/tls.ts';
import { useTaskDatabases } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

/** A CA, a server certificate it signed for DNS:localhost, and an unrelated CA. */
function makeCertificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  for (const ca of ['ca', 'other-ca'])
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${ca}`,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
    );
  ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  execFileSync('sh', ['-c', "printf 'subjectAltName=DNS:localhost\\n' > san.ext"], { cwd: dir });
  ssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.crt',
  );
  chmodSync(join(dir, 'server.key'), 0o600);
  // The server runs as the postgres user when the tests run as root (test/helpers/postgres.ts),
  // and reads its key only if it owns it.
  chmodSync(dir, 0o755);
  if (process.getuid?.() === 0)
    execFileSync('chown', ['postgres', join(dir, 'server.key'), join(dir, 'server.crt')]);
  return {
    ca: join(dir, 'ca.crt'),
    otherCa: join(dir, 'other-ca.crt'),
    cert: join(dir, 'server.crt'),
    key: join(dir, 'server.key'),
  };
}

const certDir = mkdtempSync(join(tmpdir(), 'cdc-tls-'));
afterAll(() => rmSync(certDir, { recursive: true, force: true }));
const certs = makeCertificates(certDir);
const tlsCluster = usePostgres({
  settings: { ssl: 'on', ssl_cert_file: certs.cert, ssl_key_file: certs.key },
});
const plainCluster = usePostgres();

function settingsFor(
  cluster: () => { host: string; port: number; user: string; password: string },
  db: string,
  extra: Record<string, string>,
) {
  const c = cluster();
  return readSettings(
    parseConfigOrThrow(postgresCdcConfigDefs, {
      'database.hostname': c.host,
      'database.port': String(c.port),
      'database.user': c.user,
      'database.password': c.password,
      'database.dbname': db,
      'topic.prefix': 'srv',
      ...extra,
    }).values,
  );
}

async function sslOfConnection(config: pg.ClientConfig): Promise<boolean> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    const r = await client.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    return r.rows[0].ssl === true;
  } finally {
    await client.end();
  }
}

describe('TLS to Postgres (sslmode as libpq)', () => {
  const tls = useTaskDatabases(tlsCluster, 'tls');

  it('prefer uses TLS for the check, the snapshot and the replication stream', async () => {
    const { db, sql } = await tls.database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)',
    );
    const s = settingsFor(tlsCluster, db, {});
    await checkDatabase(s);
    expect(usesTls(s.connection)).toBe(true);
    expect(await sslOfConnection(clientConfig(s))).toBe(true);

    const task = new PostgresCdcSourceTask();
    tls.cleanups.push(() => Promise.resolve(task.stop()));
    const driver = new TaskDriver(task, new InMemoryOffsets());
    await driver.start(tls.config(db));
    await sql.query('INSERT INTO t VALUES (2)');
    await driver.pollUntil(
      'snapshot and stream',
      (d) => d.filter((r) => r.value !== null).length >= 2,
    );
    const sessions = await sql.query(
      `SELECT a.backend_type, s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
        WHERE a.backend_type = 'walsender'`,
    );
    expect(sessions.rows).toEqual([{ backend_type: 'walsender', ssl: true }]);
  });

  it('verify-ca accepts the server with the right CA and refuses it with another', async () => {
    const { db } = await tls.database('CREATE TABLE t (id int PRIMARY KEY)');

    await checkDatabase(
      settingsFor(tlsCluster, db, {
        'database.sslmode': 'verify-ca',
        'database.sslrootcert': certs.ca,
      }),
    );
    await expect(
      checkDatabase(
        settingsFor(tlsCluster, db, {
          'database.sslmode': 'verify-ca',
          'database.sslrootcert': certs.otherCa,
        }),
      ),
    ).rejects.toThrow(
      /TLS to Postgres at .* failed under database\.sslmode=verify-ca \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
    );
  });

  it('verify-full accepts the host name the certificate names, and refuses one it does not', async () => {
    const { db } = await tls.database('CREATE TABLE t (id int PRIMARY KEY)');
    const byName = settingsFor(tlsCluster, db, {
      'database.sslmode': 'verify-full',
      'database.sslrootcert': certs.ca,
    });
    byName.connection.host = 'localhost';

    await checkDatabase(byName);

    await expect(
      checkDatabase(
        settingsFor(tlsCluster, db, {
          'database.sslmode': 'verify-full',
          'database.sslrootcert': certs.ca,
        }),
      ),
    ).rejects.toThrow(
      /failed under database\.sslmode=verify-full \(ERR_TLS_CERT_ALTNAME_INVALID: Hostname\/IP does not match/,
    );
  });

  const plain = useTaskDatabases(plainCluster, 'plain');

  it('prefer falls back to plain against a server without TLS; require refuses it', async () => {
    const { db } = await plain.database('CREATE TABLE t (id int PRIMARY KEY)');
    const s = settingsFor(plainCluster, db, {});

    await checkDatabase(s);
    expect(usesTls(s.connection)).toBe(false);
    await expect(
      checkDatabase(settingsFor(plainCluster, db, { 'database.sslmode': 'require' })),
    ).rejects.toThrow(/does not support SSL/);
  });
});
