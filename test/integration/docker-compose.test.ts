/**
 * Docker does not run on the test machines, so docker-compose.yml is checked as data:
 * every CONNECT_* variable must be a real worker key with a valid value (read through
 * the same loader the worker uses), the workers must form one cluster around the
 * broker they point at, in both setups (embedded broker, and the `kafka` profile),
 * and ports, volumes and the Dockerfile must agree with the configured values.
 */
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { workerCrossChecks } from '../../src/cli/worker-command.ts';
import { loadConfig } from '../../src/config/load.ts';
import { parseListener } from '../../src/config/validators.ts';
import {
  distributedWorkerDefs,
  embedsBroker,
  restListeners,
  workerPassthroughPrefixes,
} from '../../src/config/worker-config.ts';

const root = new URL('../../', import.meta.url);
const composeText = readFileSync(new URL('docker-compose.yml', root), 'utf8');
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string | string[];
  profiles?: string[];
  environment?: Record<string, string | number | null>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string; required?: boolean }>;
}
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

/** Compose's `${NAME}` and `${NAME:-default}` interpolation, for the cases the file uses. */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) =>
    vars[name] !== undefined && vars[name] !== '' ? vars[name] : (fallback ?? ''),
  );
}

function compose(vars: Record<string, string> = {}): Compose {
  return parse(interpolate(composeText, vars), { merge: true }) as Compose;
}

const workers = ['worker-1', 'worker-2', 'worker-3'];
const workdir = /^WORKDIR\s+(\S+)/m.exec(dockerfile)![1];

function workerConfig(service: Service) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.environment ?? {}))
    env[k] = v === null ? '' : String(v);
  // The image's own ENV lines apply under the service's environment.
  const imageEnv = Object.fromEntries(
    [...dockerfile.matchAll(/^ENV\s+(\S+)=(\S+)/gm)].map((m) => [m[1], m[2]]),
  );
  return loadConfig({
    defs: distributedWorkerDefs,
    file: new URL('config/worker.properties', root).pathname,
    env: { ...imageEnv, ...env },
    envPrefix: 'CONNECT_',
    options: [],
    passthroughPrefixes: workerPassthroughPrefixes,
    crossChecks: workerCrossChecks,
  });
}

function containerPort(mapping: string): number {
  return Number(mapping.split(':').at(-1));
}

describe('docker-compose.yml', () => {
  it('has Postgres with logical decoding, MinIO with its bucket created, Redis and three workers', () => {
    const { services } = compose();
    expect(Object.keys(services).sort()).toEqual(
      ['kafka', 'minio', 'minio-setup', 'postgres', 'redis', ...workers].sort(),
    );
    expect(services.postgres.command).toContain('wal_level=logical');
    const bucket = JSON.parse(
      readFileSync(new URL('config/connectors/parquet-sink-s3.json', root), 'utf8'),
    ).config['s3.bucket.name'];
    expect(String(services['minio-setup'].command)).toContain(
      `mc mb --ignore-existing local/${bucket}`,
    );
    expect(services['minio-setup'].depends_on?.minio.condition).toBe('service_healthy');
    for (const w of workers) expect(services[w].build).toBe('.');
  });

  it.each([
    ['the embedded broker', {}],
    ['the kafka profile', { KAFKA_BOOTSTRAP_SERVERS: 'kafka:9092' }],
  ])('with %s every worker variable is a known key with a valid value', (_, vars) => {
    const { services } = compose(vars);
    for (const w of workers) {
      const loaded = workerConfig(services[w]);
      expect({ worker: w, errors: loaded.errors, warnings: loaded.warnings }).toEqual({
        worker: w,
        errors: [],
        warnings: [],
      });
    }
  });

  it('by default worker-1 runs the broker, advertised under its service name, and the others use it', () => {
    const { services } = compose();
    const first = workerConfig(services['worker-1']).values;
    expect(embedsBroker(first)).toBe(true);
    expect(first['broker.host']).toBe('0.0.0.0');
    expect(first['broker.advertised.host']).toBe('worker-1');
    const brokerAddress = `worker-1:${first['broker.port']}`;
    for (const w of ['worker-2', 'worker-3']) {
      const values = workerConfig(services[w]).values;
      expect(embedsBroker(values)).toBe(false);
      expect(values['bootstrap.servers']).toEqual([brokerAddress]);
      expect(services[w].depends_on?.['worker-1']).toBeDefined();
    }
  });

  it('with the kafka profile only bootstrap.servers changes, to the Kafka service in KRaft mode', () => {
    const before = compose().services;
    const after = compose({ KAFKA_BOOTSTRAP_SERVERS: 'kafka:9092' }).services;
    const kafka = after.kafka;
    expect(kafka.image).toMatch(/^apache\/kafka:/);
    expect(kafka.profiles).toEqual(['kafka']);
    expect(kafka.environment?.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(String(kafka.environment?.KAFKA_ADVERTISED_LISTENERS)).toContain(
      'PLAINTEXT://kafka:9092',
    );
    for (const w of workers) {
      const values = workerConfig(after[w]).values;
      expect(values['bootstrap.servers']).toEqual(['kafka:9092']);
      expect(embedsBroker(values)).toBe(false);
      const changed = Object.keys(after[w].environment ?? {}).filter(
        (k) => after[w].environment?.[k] !== before[w].environment?.[k],
      );
      expect(changed).toEqual(['CONNECT_BOOTSTRAP_SERVERS']);
      expect(after[w].depends_on?.kafka).toEqual({ condition: 'service_started', required: false });
    }
  });

  it('workers share one group.id and the internal topic names', () => {
    const { services } = compose();
    const keys = [
      'group.id',
      'config.storage.topic',
      'offset.storage.topic',
      'status.storage.topic',
    ];
    const seen = workers.map((w) => {
      const values = workerConfig(services[w]).values;
      return keys.map((k) => values[k]);
    });
    expect(new Set(seen.map((s) => JSON.stringify(s))).size).toBe(1);
  });

  it('publishes each worker REST port and the broker port to distinct host ports', () => {
    const { services } = compose();
    const hostPorts: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      for (const mapping of service.ports ?? []) {
        hostPorts.push(mapping.split(':')[0]);
        if (!workers.includes(name)) continue;
        const values = workerConfig(service).values;
        const published = new Set([
          ...restListeners(values).map((l) => parseListener(l)!.port),
          ...(embedsBroker(values) ? [values['broker.port'] as number] : []),
        ]);
        expect(published.has(containerPort(mapping))).toBe(true);
      }
      if (workers.includes(name)) {
        const rest = parseListener(restListeners(workerConfig(service).values)[0])!;
        expect(rest.host).toBe('0.0.0.0');
        expect(service.ports?.map(containerPort)).toContain(rest.port);
      }
    }
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
    expect(dockerfile).toMatch(/^EXPOSE 8083 9092$/m);
  });

  it('declares every named volume it mounts, mounts every one it declares, and keeps broker data on one', () => {
    const { services, volumes } = compose();
    const used = new Set<string>();
    for (const service of Object.values(services)) {
      for (const v of service.volumes ?? []) {
        const [source] = v.split(':');
        if (!source.startsWith('.') && !source.startsWith('/')) used.add(source);
      }
    }
    expect([...used].sort()).toEqual(Object.keys(volumes).sort());
    for (const w of workers) {
      const values = workerConfig(services[w]).values;
      const dataDir = posix.resolve(workdir, values['broker.data.dir'] as string);
      const mounts = (services[w].volumes ?? []).map((v) => v.split(':')[1]);
      expect(mounts.some((m) => dataDir === m || dataDir.startsWith(`${m}/`))).toBe(true);
    }
    expect(dockerfile).toContain(`VOLUME ${workdir}/data`);
  });
});
