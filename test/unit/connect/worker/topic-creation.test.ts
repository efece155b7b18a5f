import { describe, expect, it } from 'vitest';
import { TopicCreation } from '../../../../src/connect/runtime/topic-creation.ts';

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
});
