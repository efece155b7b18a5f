/**
 * Helpers for standalone-mode integration tests: a worker config as `connect
 * standalone` would load it, a standalone worker started in process against a test
 * broker, REST calls, and waiting for a condition (checked on every attempt, with a
 * deadline, instead of sleeping a guessed time).
 */
export { rest } from '../../helpers/rest-client.ts';
export { waitFor } from '../../helpers/wait.ts';

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { loadConfig } from '../../../src/config/load.ts';
import {
  standaloneWorkerDefs,
  workerPassthroughPrefixes,
} from '../../../src/config/worker-config.ts';
import {
  type StandaloneWorker,
  startStandaloneWorker,
} from '../../../src/connect/runtime/standalone-worker.ts';

/** Only the plugins these tests use: importing every bundled plugin costs seconds. */
export const testPluginPath = ['file', 'datagen']
  .map((p) => fileURLToPath(new URL(`../../../connectors/${p}`, import.meta.url)))
  .join(',');

export function workerConfig(bootstrap: string, dir: string, extra: Record<string, string> = {}) {
  const options = Object.entries({
    'bootstrap.servers': bootstrap,
    'plugin.path': testPluginPath,
    listeners: 'http://127.0.0.1:0',
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
    'offset.flush.interval.ms': '200',
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'task.shutdown.graceful.timeout.ms': '10000',
    ...extra,
  }).map(([k, v]) => `${k}=${v}`);
  const loaded = loadConfig({
    defs: standaloneWorkerDefs,
    env: {},
    envPrefix: 'CONNECT_',
    options,
    passthroughPrefixes: workerPassthroughPrefixes,
  });
  if (loaded.errors.length > 0)
    throw new Error(`bad test worker config: ${JSON.stringify(loaded.errors)}`);
  return loaded.values;
}

/** A standalone worker stopped when the current test ends (pass or fail). */
export async function useStandalone(
  config: Record<string, unknown>,
  connectors: Array<{ name: string; config: Record<string, string> }> = [],
): Promise<StandaloneWorker> {
  const worker = await startStandaloneWorker({ config, connectors });
  onTestFinished(() => worker.stop());
  for (const c of worker.created) if (c.error) throw c.error;
  return worker;
}

export function fileLines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}
