/**
 * PATCH /connectors/{name}/offsets for a source connector, as the herders run it
 * (connector-offsets.ts): an all-null PATCH is "altered" (only DELETE is "reset"), a
 * nulled partition disappears from GET, and nested or array values are refused with
 * OffsetUtils.validateFormat's message before the connector or the store is touched.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { definePlugins } from '../../../../src/connect/api/plugin-manifest.ts';
import {
  alterConnectorOffsets,
  type OffsetContext,
  readConnectorOffsets,
} from '../../../../src/connect/herder/connector-offsets.ts';
import { offsetsMessages } from '../../../../src/connect/herder/herder.ts';
import { ConfigProviders } from '../../../../src/connect/runtime/config-providers.ts';
import { PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';

let alterCalls = 0;
const source = definePlugins({
  type: 'source',
  className: 'test.OffsetsSourceConnector',
  version: '1',
  configDefs: [],
  createConnector: () => ({
    version: () => '1',
    start() {},
    taskConfigs: () => [],
    stop() {},
    alterOffsets() {
      alterCalls++;
      return true;
    },
  }),
  createTask: () => ({ version: () => '1', start() {}, poll: async () => null, stop() {} }),
});

const config = { name: 'src', 'connector.class': 'test.OffsetsSourceConnector' };
let ctx: OffsetContext;
beforeEach(() => {
  alterCalls = 0;
  const plugins = new PluginRegistry();
  plugins.add(source, 'test');
  ctx = {
    plugins,
    offsetStore: new MemoryOffsetBackingStore(),
    admin: () => {
      throw new Error('no admin for a source connector');
    },
    cluster: () => {
      throw new Error('no cluster client for a source connector');
    },
    providers: ConfigProviders.none,
  };
});

describe('source offsets PATCH', () => {
  it('a PATCH whose offsets are all null is reported as altered; the partition disappears', async () => {
    await alterConnectorOffsets(ctx, 'src', config, [
      { partition: { file: 'a' }, offset: { position: 10 } },
      { partition: { file: 'b' }, offset: { position: 20 } },
    ]);
    const answer = await alterConnectorOffsets(ctx, 'src', config, [
      { partition: { file: 'a' }, offset: null },
    ]);
    expect(answer).toEqual({ message: offsetsMessages.altered });
    expect(await readConnectorOffsets(ctx, 'src', config)).toEqual({
      offsets: [{ partition: { file: 'b' }, offset: { position: 20 } }],
    });
  });

  it.each([
    ['a nested offset value', { file: 'a' }, { position: { line: 1 } }, 'position', 'MAP'],
    ['an array offset value', { file: 'a' }, { positions: [1, 2] }, 'positions', 'ARRAY'],
    ['a nested partition value', { file: { name: 'a' } }, { position: 1 }, 'file', 'MAP'],
    ['an array partition value', { files: ['a'] }, { position: 1 }, 'files', 'ARRAY'],
  ])(
    '%s is refused with validateFormat text, nothing written',
    async (_, partition, offset, field, type) => {
      const error = await alterConnectorOffsets(ctx, 'src', config, [
        { partition: { file: 'ok' }, offset: { position: 1 } },
        { partition, offset },
      ]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        kind: 'bad-request',
        message: `Offsets may only contain primitive types as values, but field ${field} contains ${type}`,
      });
      expect(alterCalls).toBe(0);
      expect(await readConnectorOffsets(ctx, 'src', config)).toEqual({ offsets: [] });
    },
  );

  it('strings, numbers, booleans and nulls are accepted', async () => {
    await alterConnectorOffsets(ctx, 'src', config, [
      { partition: { file: 'a', shard: 1, live: true, extra: null }, offset: { position: 1.5 } },
    ]);
    expect((await readConnectorOffsets(ctx, 'src', config)).offsets).toHaveLength(1);
  });
});
