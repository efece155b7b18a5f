import { describe, expect, it } from 'vitest';
import { workerCrossChecks } from '../../../src/cli/worker-command.ts';
import { advertisedHost, brokerConfigDefs } from '../../../src/config/broker-config.ts';
import { parseConfig } from '../../../src/config/config-def.ts';
import { loadConfig } from '../../../src/config/load.ts';
import {
  bundledPluginPath,
  distributedWorkerDefs,
  embedsBroker,
  restListeners,
  standaloneWorkerDefs,
  workerPassthroughPrefixes,
} from '../../../src/config/worker-config.ts';

describe('worker and broker config definitions', () => {
  it.each([
    ['distributed worker', distributedWorkerDefs],
    ['standalone worker', standaloneWorkerDefs],
    ['broker', brokerConfigDefs],
  ])('%s: names are unique and every default passes its own validator', (_, defs) => {
    const names = defs.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    expect(parseConfig(defs, {}).errors).toEqual([]);
    for (const def of defs) expect(def.doc.length).toBeGreaterThan(10);
  });

  it('no defined key hides under a passthrough prefix, which would make it ambiguous', () => {
    const shadowed = distributedWorkerDefs
      .map((d) => d.name)
      .filter((n) => workerPassthroughPrefixes.some((p) => n.startsWith(p)))
      .filter((n) => !/^(key|value)\.converter\.schemas\.enable$/.test(n));
    expect(shadowed).toEqual([]);
  });

  it('carries Kafka Connect defaults for the keys people tune', () => {
    const { values } = parseConfig(distributedWorkerDefs, {});
    expect(values).toMatchObject({
      'offset.flush.interval.ms': 60000,
      'offset.flush.timeout.ms': 5000,
      'session.timeout.ms': 10000,
      'heartbeat.interval.ms': 3000,
      'rebalance.timeout.ms': 60000,
      'scheduled.rebalance.max.delay.ms': 30000,
      'connect.protocol': 'compatible',
      'task.shutdown.graceful.timeout.ms': 5000,
      'rest.port': 8083,
      'plugin.path': [bundledPluginPath],
      'socket.request.max.bytes': 104857600,
      'log.segment.bytes': 1073741824,
    });
    expect(bundledPluginPath).toMatch(/connectors$/);
  });

  it('the quick-start worker.properties loads with no error and no warning', () => {
    const loaded = loadConfig({
      defs: distributedWorkerDefs,
      file: new URL('../../../config/worker.properties', import.meta.url).pathname,
      env: {},
      envPrefix: 'CONNECT_',
      options: [],
      passthroughPrefixes: workerPassthroughPrefixes,
      crossChecks: workerCrossChecks,
    });
    expect(loaded.errors).toEqual([]);
    expect(loaded.warnings).toEqual([]);
    expect(embedsBroker(loaded.values)).toBe(true);
    expect(restListeners(loaded.values)).toEqual(['http://127.0.0.1:8083']);
    expect(loaded.values['broker.port']).toBe(9092);
  });

  it('embeds the broker exactly when bootstrap.servers is empty, unless told otherwise', () => {
    const of = (raw: Record<string, string>) =>
      embedsBroker(parseConfig(distributedWorkerDefs, raw).values);
    expect(of({})).toBe(true);
    expect(of({ 'bootstrap.servers': 'kafka:9092' })).toBe(false);
    expect(of({ 'bootstrap.servers': 'kafka:9092', 'broker.embedded': 'true' })).toBe(true);
  });

  it('a worker told not to embed the broker needs bootstrap.servers', () => {
    const { values } = parseConfig(distributedWorkerDefs, { 'broker.embedded': 'false' });
    expect(workerCrossChecks(values).map((e) => e.key)).toEqual(['bootstrap.servers']);
  });

  it('falls back to the deprecated rest.host.name and rest.port without listeners', () => {
    const { values } = parseConfig(distributedWorkerDefs, {
      'rest.host.name': 'localhost',
      'rest.port': '9000',
    });
    expect(restListeners(values)).toEqual(['http://localhost:9000']);
  });

  it('advertises loopback for a wildcard listen address unless told otherwise', () => {
    const parse = (raw: Record<string, string>) =>
      advertisedHost(parseConfig(brokerConfigDefs, raw).values);
    expect(parse({})).toBe('127.0.0.1');
    expect(parse({ 'broker.host': '0.0.0.0' })).toBe('127.0.0.1');
    expect(parse({ 'broker.host': '0.0.0.0', 'broker.advertised.host': 'worker-1' })).toBe(
      'worker-1',
    );
  });
});
