/**
 * Which topics the user asked to compact: the topic.creation group that applies to a
 * topic (as the runtime picks it) and its cleanup.policy, as the user wrote it.
 */
import { describe, expect, it } from 'vitest';
import { explicitCompaction } from '../src/keyless-tables.ts';

describe('which topics the user asked to compact (topic.creation.*)', () => {
  it.each<[string, Record<string, string>, string | null]>([
    ['nothing set', {}, null],
    ['default compact', { 'topic.creation.default.cleanup.policy': 'compact' }, 'default'],
    [
      'default compact,delete',
      { 'topic.creation.default.cleanup.policy': 'compact,delete' },
      'default',
    ],
    ['default delete', { 'topic.creation.default.cleanup.policy': 'delete' }, null],
    [
      'a matching group with compact',
      {
        'topic.creation.groups': 'logs',
        'topic.creation.logs.include': 'srv\\.public\\..*',
        'topic.creation.logs.cleanup.policy': 'compact',
      },
      'logs',
    ],
    [
      'a matching group without a policy before a compact default',
      {
        'topic.creation.default.cleanup.policy': 'compact',
        'topic.creation.groups': 'logs',
        'topic.creation.logs.include': 'srv\\.public\\.nk',
      },
      null,
    ],
    [
      'a group that excludes the topic, then a compact default',
      {
        'topic.creation.default.cleanup.policy': 'compact',
        'topic.creation.groups': 'logs',
        'topic.creation.logs.include': 'srv\\.public\\..*',
        'topic.creation.logs.exclude': 'srv\\.public\\.nk',
        'topic.creation.logs.cleanup.policy': 'delete',
      },
      'default',
    ],
  ])('%s', (_, config, group) => {
    expect(explicitCompaction(config, 'srv.public.nk')?.group ?? null).toBe(group);
  });
});
