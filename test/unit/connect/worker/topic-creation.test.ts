import { describe, expect, it } from 'vitest';
import postgresCdc from '../../../../connectors/postgres-cdc/index.ts';
import { TopicCreation } from '../../../../src/connect/runtime/topic-creation.ts';
import { withTopicCreationDefaults } from '../../../../src/connect/runtime/worker.ts';

const config = {
  'topic.creation.groups': 'compacted,big',
  'topic.creation.default.replication.factor': '-1',
  'topic.creation.default.partitions': '1',
  'topic.creation.compacted.include': 'cdc\\..*',
  'topic.creation.compacted.exclude': 'cdc\\.audit\\..*',
  'topic.creation.compacted.cleanup.policy': 'compact',
  'topic.creation.big.include': 'big-.*,huge',
  'topic.creation.big.partitions': '12',
};

describe('TopicCreation (KIP-158)', () => {
  it('is off unless the worker allows it and the default group names partitions and replication', () => {
    expect(TopicCreation.fromConfig(false, config)).toBeNull();
    expect(TopicCreation.fromConfig(true, { 'topic.creation.default.partitions': '1' })).toBeNull();
    expect(TopicCreation.fromConfig(true, config)).not.toBeNull();
  });

  it('takes the first group whose include matches the whole name and whose exclude does not', () => {
    const tc = TopicCreation.fromConfig(true, config) as TopicCreation;
    expect(tc.groupFor('cdc.public.orders')).toMatchObject({
      name: 'compacted',
      partitions: 1,
      replicationFactor: -1,
      configs: { 'cleanup.policy': 'compact' },
    });
    expect(tc.groupFor('cdc.audit.log').name).toBe('default');
    expect(tc.groupFor('huge')).toMatchObject({ name: 'big', partitions: 12 });
    expect(tc.groupFor('not-huge').name).toBe('default');
  });

  it('refuses a partition count that is neither -1 nor positive, naming the key', () => {
    expect(() =>
      TopicCreation.fromConfig(true, { ...config, 'topic.creation.big.partitions': '0' }),
    ).toThrow(/topic\.creation\.big\.partitions/);
  });

  it("creates a source manifest's topics with its declared defaults, under the user's own keys", () => {
    const manifest = postgresCdc.find((m) => m.type === 'source');
    if (manifest?.type !== 'source') throw new Error('no source manifest');
    const plain = { 'connector.class': 'PostgresConnector', 'topic.prefix': 'shop' };
    const tc = TopicCreation.fromConfig(
      true,
      withTopicCreationDefaults(manifest, plain),
    ) as TopicCreation;
    expect(tc.groupFor('shop.public.orders')).toMatchObject({
      name: 'default',
      configs: { 'cleanup.policy': 'compact' },
    });
    const own = { ...plain, 'topic.creation.default.partitions': '6' };
    const tuned = TopicCreation.fromConfig(
      true,
      withTopicCreationDefaults(manifest, own),
    ) as TopicCreation;
    expect(tuned.groupFor('shop.public.orders')).toMatchObject({
      partitions: 6,
      configs: { 'cleanup.policy': 'compact' },
    });
  });
});
