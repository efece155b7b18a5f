/**
 * rest.port / rest.host.name given while listeners is set do nothing (listeners wins, as
 * in Kafka Connect); loading the worker config says so in one warning instead of
 * leaving the API silently on the listener's port.
 */
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../../../../src/cli/cli-context.ts';
import { runStandalone } from '../../../../src/cli/standalone-command.ts';
import { loadConfig } from '../../../../src/config/load.ts';
import {
  distributedWorkerDefs,
  restListeners,
  restListenerWarnings,
  workerPassthroughPrefixes,
} from '../../../../src/config/worker-config.ts';

const shippedWorkerProperties = fileURLToPath(
  new URL('../../../../config/worker.properties', import.meta.url),
);

function load(options: string[], env: Record<string, string> = {}) {
  return loadConfig({
    defs: distributedWorkerDefs,
    envPrefix: 'CONNECT_',
    passthroughPrefixes: workerPassthroughPrefixes,
    crossWarnings: restListenerWarnings,
    file: shippedWorkerProperties,
    env,
    options,
  });
}

describe('rest.port and rest.host.name while listeners is set', () => {
  it('-o rest.port with the shipped worker.properties warns, naming both keys and that listeners wins', () => {
    const loaded = load(['rest.port=8084']);
    expect(loaded.errors).toEqual([]);
    expect(restListeners(loaded.values)).toEqual(['http://127.0.0.1:8083']);
    const warnings = loaded.warnings.filter((w) => w.includes('rest.port'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('rest.port=8084 (from -o) is ignored');
    expect(warnings[0]).toContain(`listeners (from ${shippedWorkerProperties}) is set and wins`);
    expect(warnings[0]).toContain('http://127.0.0.1:8083');
  });

  it('CONNECT_REST_PORT and CONNECT_REST_HOST_NAME give one warning naming both', () => {
    const loaded = load([], { CONNECT_REST_PORT: '8085', CONNECT_REST_HOST_NAME: '0.0.0.0' });
    const warnings = loaded.warnings.filter((w) => w.includes('listeners'));
    expect(warnings).toEqual([
      expect.stringContaining(
        'rest.host.name=0.0.0.0 (from environment variable CONNECT_REST_HOST_NAME) and ' +
          'rest.port=8085 (from environment variable CONNECT_REST_PORT) are ignored',
      ),
    ]);
  });

  it('-o listeners moves the API as worker.properties and the README say, with no warning', () => {
    const loaded = load(['listeners=http://127.0.0.1:8084']);
    expect(restListeners(loaded.values)).toEqual(['http://127.0.0.1:8084']);
    expect(loaded.warnings).toEqual([]);
  });

  it('rest.port alone (listeners not set) is used, with no warning', () => {
    const loaded = loadConfig({
      defs: distributedWorkerDefs,
      envPrefix: 'CONNECT_',
      crossWarnings: restListenerWarnings,
      env: {},
      options: ['rest.port=8086'],
    });
    expect(restListeners(loaded.values)).toEqual(['http://:8086']);
    expect(loaded.warnings).toEqual([]);
  });
});

describe('connect standalone', () => {
  it('prints the warning at start for CONNECT_REST_PORT with the shipped worker.properties', async () => {
    const errors: string[] = [];
    const ctx: CliContext = {
      out: () => {},
      err: (line) => errors.push(line),
      env: { CONNECT_REST_PORT: '8084' },
      signals: new EventEmitter(),
      forceExit: () => {},
      startBroker: () => Promise.reject(new Error('no broker in this test')),
      shutdownTimeoutMs: 1000,
    };
    // A connector file that does not exist ends the run after the config is loaded and
    // reported, before anything starts.
    const code = await runStandalone(ctx, shippedWorkerProperties, ['/nonexistent/c.json'], []);
    expect(code).toBe(2);
    expect(errors.filter((l) => l.startsWith('warning: rest.port=8084'))).toEqual([
      expect.stringContaining('(from environment variable CONNECT_REST_PORT) is ignored'),
    ]);
  });
});
