import { describe, expect, it } from 'vitest';
import type { ConnectorConfig, SourceConnector } from '../../../../src/connect/api/connector.ts';
import { definePlugins } from '../../../../src/connect/api/index.ts';
import { ExternalStateReader } from '../../../../src/connect/runtime/external-state.ts';
import { PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { ManualTimers } from '../../../../src/util/timers.ts';

/** A registry with one source plugin whose connectors answer externalState with `hook`. */
function registryWith(hook?: (config: ConnectorConfig) => Promise<Record<string, unknown>>) {
  const plugins = new PluginRegistry();
  const connector = (): SourceConnector => ({
    version: () => '1.0.0',
    start() {},
    taskConfigs: () => [],
    stop() {},
    ...(hook ? { externalState: hook } : {}),
  });
  plugins.add(
    definePlugins({
      type: 'source',
      className: 'com.example.SlotSourceConnector',
      version: '1.0.0',
      configDefs: [],
      createConnector: connector,
      createTask: () => ({}) as never,
    }),
    'builtin',
  );
  return plugins;
}

const config = { 'connector.class': 'com.example.SlotSourceConnector', slot: 'a' };

function reader(plugins: PluginRegistry, timers = new ManualTimers()) {
  return {
    timers,
    reader: new ExternalStateReader(plugins, {
      timeoutMs: 1_000,
      cacheMs: 2_000,
      timers,
      now: () => timers.clock.now(),
    }),
  };
}

describe('ExternalStateReader', () => {
  it('answers what the hook reports, on a fresh connector given the stored config', async () => {
    const seen: ConnectorConfig[] = [];
    const { reader: r } = reader(
      registryWith(async (c) => {
        seen.push(c);
        return { replication_slot: { name: c.slot, lag_bytes: 10 } };
      }),
    );

    expect(await r.read('src', config)).toEqual({ replication_slot: { name: 'a', lag_bytes: 10 } });
    expect(seen).toEqual([config]);
  });

  it('answers undefined for a plugin without the hook and for a class no plugin has', async () => {
    const { reader: r } = reader(registryWith());

    expect(await r.read('src', config)).toBeUndefined();
    expect(await r.read('other', { 'connector.class': 'com.example.Missing' })).toBeUndefined();
  });

  it('shares one reading for cacheMs, and reads again after it or when the config changed', async () => {
    let calls = 0;
    const { reader: r, timers } = reader(
      registryWith(async () => {
        calls += 1;
        return { calls };
      }),
    );

    await Promise.all([r.read('src', config), r.read('src', config)]);
    timers.advance(1_999);
    expect(await r.read('src', config)).toEqual({ calls: 1 });
    expect(await r.read('src', { ...config, slot: 'b' })).toEqual({ calls: 2 });
    timers.advance(2_000);
    expect(await r.read('src', { ...config, slot: 'b' })).toEqual({ calls: 3 });
  });

  it('shows a hook that throws as an error in its place', async () => {
    const { reader: r } = reader(
      registryWith(async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5999');
      }),
    );

    expect(await r.read('src', config)).toEqual({ error: 'connect ECONNREFUSED 127.0.0.1:5999' });
  });

  it('shows a hook that outlives timeoutMs as late, without waiting for it', async () => {
    const { reader: r, timers } = reader(registryWith(() => new Promise(() => {})));

    const answer = r.read('src', config);
    await Promise.resolve();
    timers.advance(1_000);

    expect(await answer).toEqual({ error: 'no answer within 1000 ms' });
  });
});
