/**
 * A statement and a COPY in one round trip (statement-then-copy.ts), against real
 * Postgres: the statement has committed, in a transaction of its own, before the COPY
 * takes its snapshot (what DBLog needs of an open watermark and its chunk); the rows
 * come whole over many socket reads; and a failing statement or COPY fails the query
 * with the server's error and leaves the connection ready for the next one. Over plain
 * TCP and over TLS (where node-postgres reads a TLS socket: the bytes are swapped there).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { CopyTextParser } from '../src/copy-text-parser.ts';
import { StatementThenCopy } from '../src/statement-then-copy.ts';

/** A self-signed certificate for the TLS server (the client does not verify it). */
const certDir = mkdtempSync(join(tmpdir(), 'stmt-copy-tls-'));
afterAll(() => rmSync(certDir, { recursive: true, force: true }));
execFileSync(
  'openssl',
  'req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -keyout server.key -out server.crt'.split(
    ' ',
  ),
  { cwd: certDir, stdio: 'pipe' },
);
chmodSync(join(certDir, 'server.key'), 0o600);
// The server runs as the postgres user when the tests run as root and reads its key
// only if it owns it (as postgres-cdc-task-tls.test.ts does).
chmodSync(certDir, 0o755);
if (process.getuid?.() === 0)
  execFileSync('chown', ['postgres', join(certDir, 'server.key'), join(certDir, 'server.crt')]);

const plain = usePostgres();
const tls = usePostgres({
  settings: {
    ssl: 'on',
    ssl_cert_file: join(certDir, 'server.crt'),
    ssl_key_file: join(certDir, 'server.key'),
  },
});

describe.each([
  { over: 'plain TCP', cluster: plain, ssl: false as const },
  { over: 'TLS', cluster: tls, ssl: { rejectUnauthorized: false } },
])('StatementThenCopy over $over (real Postgres)', ({ cluster, ssl }) => {
  let sql: pg.Client;
  beforeAll(async () => {
    const db = await cluster().freshDatabase('wmcopy');
    sql = new pg.Client({ ...cluster().connectionConfig(db), ssl });
    await sql.connect();
    const encrypted = await sql.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    expect(encrypted.rows[0].ssl).toBe(ssl !== false);
    await sql.query('CREATE TABLE marks (id text PRIMARY KEY)');
  });
  beforeEach(async () => {
    await sql.query('TRUNCATE marks');
  });
  afterAll(async () => {
    await sql?.end();
  });

  const connect = async () => sql;

  function run(client: pg.Client, statement: string, copy: string, columns: number) {
    const query = new StatementThenCopy(statement, copy, new CopyTextParser(columns));
    client.query(query);
    return query.done;
  }

  it('commits the statement in its own transaction before the COPY takes its snapshot', async () => {
    const client = await connect();
    const rows = await run(
      client,
      "INSERT INTO marks VALUES ('open')",
      'COPY (SELECT id, xmin::text, pg_current_xact_id()::text FROM marks) TO STDOUT',
      3,
    );
    expect(rows).toHaveLength(1);
    const [id, insertedBy, copiedBy] = rows[0] as string[];
    expect(id).toBe('open');
    // Another transaction's row, and visible to a READ COMMITTED snapshot: committed.
    expect(insertedBy).not.toBe(copiedBy);
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('hands over every row of a COPY that spans many socket reads, escapes included', async () => {
    const client = await connect();
    const rows = await run(
      client,
      "INSERT INTO marks VALUES ('a'); INSERT INTO marks VALUES ('b')",
      `COPY (SELECT g, 'tab' || chr(9) || 'newline' || chr(10) || repeat('x', 200) FROM generate_series(1, 20000) g ORDER BY g) TO STDOUT`,
      2,
    );
    expect(rows).toHaveLength(20000);
    expect(rows[19999]).toEqual(['20000', `tab\tnewline\n${'x'.repeat(200)}`]);
    expect((await client.query('SELECT count(*)::int AS n FROM marks')).rows).toEqual([{ n: 2 }]);
  });

  it("fails with the statement's error once the COPY is over, and the connection goes on", async () => {
    const client = await connect();
    await expect(
      run(client, 'INSERT INTO missing VALUES (1)', 'COPY (SELECT 1) TO STDOUT', 1),
    ).rejects.toThrow(/relation "missing" does not exist/);
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("fails with the COPY's error, and the connection goes on", async () => {
    const client = await connect();
    await expect(
      run(
        client,
        "INSERT INTO marks VALUES ('x')",
        'COPY (SELECT 1 / (g - 3) FROM generate_series(1, 5) g) TO STDOUT',
        1,
      ),
    ).rejects.toThrow(/division by zero/);
    expect((await client.query('SELECT id FROM marks')).rows).toEqual([{ id: 'x' }]);
  });

  it('passes over notices the statement raises', async () => {
    const client = await connect();
    const rows = await run(
      client,
      "DO $$ BEGIN RAISE NOTICE 'watermark'; END $$",
      'COPY (SELECT 42) TO STDOUT',
      1,
    );
    expect(rows).toEqual([['42']]);
  });
});
