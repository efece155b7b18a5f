/**
 * A REST app over the in-memory herder, with the built-in plugins and the repository's
 * file connectors loaded from their plugin folder, for `inject` tests. Call `close()`
 * in afterAll/afterEach.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { LoggerLevels } from '../../../../src/connect/rest/logger-levels.ts';
import { buildRestApp } from '../../../../src/connect/rest/rest-server.ts';
import { loadPlugins, type PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { InMemoryHerder } from './in-memory-herder.ts';

export const fileConnectorFolder = fileURLToPath(
  new URL('../../../../connectors/file', import.meta.url),
);

let registry: Promise<PluginRegistry> | undefined;

/** The built-ins plus the file plugin folder, loaded once per test file. */
export function testPlugins(): Promise<PluginRegistry> {
  registry ??= loadPlugins({
    pluginPath: [fileConnectorFolder],
    logger: getLogger('test.plugins'),
  });
  return registry;
}

export interface RestFixture {
  app: FastifyInstance;
  herder: InMemoryHerder;
  plugins: PluginRegistry;
  close(): Promise<void>;
}

export async function restFixture(
  options: {
    topicTracking?: { enabled: boolean; allowReset: boolean };
    now?: () => number;
    cors?: { allowedOrigins: string; allowedMethods: string };
    healthCheckTimeoutMs?: number;
  } = {},
): Promise<RestFixture> {
  const plugins = await testPlugins();
  const herder = new InMemoryHerder(plugins);
  const app = buildRestApp({
    herder,
    plugins,
    // Silent: tests provoke 500s on purpose and check the answers, not the log.
    logger: pino({ level: 'silent' }),
    serverInfo: { version: '1.2.3', commit: 'abc123' },
    topicTracking: options.topicTracking,
    loggerLevels: new LoggerLevels(options.now),
    cors: options.cors,
    healthCheckTimeoutMs: options.healthCheckTimeoutMs,
  });
  await app.ready();
  return { app, herder, plugins, close: () => app.close() };
}

/** A valid FileStreamSource config for `name`. */
export function sourceConfig(
  name: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'connector.class': 'FileStreamSource',
    'tasks.max': '1',
    file: '/tmp/in.txt',
    topic: 'lines',
    name,
    ...extra,
  };
}

/** A valid FileStreamSink config for `name`. */
export function sinkConfig(
  name: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'connector.class': 'org.apache.kafka.connect.file.FileStreamSinkConnector',
    'tasks.max': '1',
    topics: 'lines',
    file: '/tmp/out.txt',
    name,
    ...extra,
  };
}
