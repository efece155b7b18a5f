/**
 * Runs once before the suite: makes sure the machine-level prerequisites that tests
 * use exist, installing or starting them when this process may (root on Debian), and
 * failing loudly with what to do when it may not. Per-test services (a private
 * Postgres, an S3 server, brokers) are started by the helpers in test/helpers.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Whether the system Python, where Debian's python3-* packages install, can import `module`. */
function hasPythonModule(module: string): boolean {
  return (
    spawnSync('/usr/bin/python3', ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0
  );
}

/** Installs each Debian package whose `present` check fails. */
function ensureDebianPackages(packages: Record<string, () => boolean>): void {
  const missing = Object.entries(packages)
    .filter(([, present]) => !present())
    .map(([pkg]) => pkg);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0 || !has('apt-get')) {
    throw new Error(
      `Tests need the Debian packages ${missing.join(', ')}: install them with apt-get install ${missing.join(' ')}`,
    );
  }
  console.log(`global-setup: installing ${missing.join(', ')} with apt-get`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function ensureRedis(): Promise<void> {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const host = url.hostname;
  const port = Number(url.port || 6379);
  if (await reachable(host, port)) return;
  if (!has('redis-server')) {
    throw new Error(
      `Redis is not answering at ${url.href} and redis-server is not installed: start Redis or set REDIS_URL`,
    );
  }
  console.log(`global-setup: starting redis-server on ${host}:${port}`);
  execFileSync(
    'redis-server',
    [
      '--daemonize',
      'yes',
      '--bind',
      host,
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: 'inherit' },
  );
  for (let i = 0; i < 50; i++) {
    if (await reachable(host, port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server was started but does not answer at ${host}:${port}`);
}

/**
 * The major version of the machine's PostgreSQL server (Debian's /usr/lib/postgresql/<N>),
 * for the PostGIS package that matches it; the CDC type tests run PostGIS there.
 */
function machinePostgresMajor(): string {
  const majors = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql').filter((d) => /^\d+$/.test(d))
    : [];
  const major = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (major === undefined) {
    throw new Error('Tests need the machine PostgreSQL server (Debian package postgresql)');
  }
  return major;
}

export default async function setup(): Promise<void> {
  const pgMajor = machinePostgresMajor();
  ensureDebianPackages({
    kcat: () => has('kcat'),
    'python3-confluent-kafka': () => hasPythonModule('confluent_kafka'),
    // Apache Avro's own Python implementation: the Avro sink files' independent reader.
    'python3-avro': () => hasPythonModule('avro.datafile'),
    // Its snappy codec (avro.codec=snappy) needs python-snappy.
    'python3-snappy': () => hasPythonModule('snappy'),
    [`postgresql-${pgMajor}-postgis-3`]: () =>
      existsSync(`/usr/share/postgresql/${pgMajor}/extension/postgis.control`),
    // The status page's browser tests (test/integration/ui) drive Debian's Chromium
    // through playwright-core, which downloads no browser of its own.
    chromium: () => existsSync('/usr/bin/chromium'),
  });
  await ensureRedis();
}
