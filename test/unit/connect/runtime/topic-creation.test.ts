import type { Admin, ITopicConfig } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { TopicCreation } from '../../../../src/connect/runtime/topic-creation.ts';

/** The two calls TopicCreation makes on kafkajs's Admin, against a set of existing topics. */
function fakeAdmin(existing: string[] = []) {
  const created: ITopicConfig[] = [];
  const admin = {
    listTopics: async () => [...existing, ...created.map((t) => t.topic)],
    createTopics: async ({ topics }: { topics: ITopicConfig[] }) => {
      created.push(...topics);
      return true;
    },
  } as unknown as Admin;
  return { admin, created };
}

/** A compacted-by-default connector (as a CDC manifest asks) with a `logs` group. */
const config = {
  'topic.creation.default.replication.factor': '-1',
  'topic.creation.default.partitions': '1',
  'topic.creation.default.cleanup.policy': 'compact',
  'topic.creation.default.retention.ms': '1000',
  'topic.creation.groups': 'logs',
  'topic.creation.logs.include': 'log\\..*',
  'topic.creation.logs.partitions': '3',
  'topic.creation.logs.compression.type': 'lz4',
};

function creation(): TopicCreation {
  const c = TopicCreation.fromConfig(true, config);
  if (c === null) throw new Error('topic creation is on for this config');
  return c;
}

const configsOf = (topic: ITopicConfig | undefined) =>
  Object.fromEntries((topic?.configEntries ?? []).map((e) => [e.name, e.value]));

describe('TopicCreation with a task override', () => {
  it("creates the topic with the override merged over the matched group's configs", async () => {
    const topics = creation();
    const { admin, created } = fakeAdmin();

    expect(topics.override('db.public.events', { 'cleanup.policy': 'delete' })).toBe(true);
    await topics.ensure('db.public.events', admin);
    await topics.ensure('db.public.orders', admin);

    expect(created.map((t) => [t.topic, t.numPartitions, configsOf(t)])).toEqual([
      ['db.public.events', 1, { 'cleanup.policy': 'delete', 'retention.ms': '1000' }],
      ['db.public.orders', 1, { 'cleanup.policy': 'compact', 'retention.ms': '1000' }],
    ]);
  });

  it("applies over a named group's own configs (not default's), keeping the group's partitions", async () => {
    const topics = creation();
    const { admin, created } = fakeAdmin();

    topics.override('log.app', { 'cleanup.policy': 'delete' });
    await topics.ensure('log.app', admin);

    expect(created[0]?.numPartitions).toBe(3);
    expect(configsOf(created[0])).toEqual({
      'compression.type': 'lz4',
      'cleanup.policy': 'delete',
    });
  });

  it('replaces an earlier override of the same topic with a later one', () => {
    const topics = creation();

    topics.override('db.public.events', { 'cleanup.policy': 'delete', 'retention.ms': '5' });
    topics.override('db.public.events', { 'cleanup.policy': 'compact,delete' });

    expect(topics.topicConfigs('db.public.events')).toEqual({
      'cleanup.policy': 'compact,delete',
      'retention.ms': '1000',
    });
  });

  it('leaves an existing topic as it is, override or not', async () => {
    const topics = creation();
    const { admin, created } = fakeAdmin(['db.public.events']);

    topics.override('db.public.events', { 'cleanup.policy': 'delete' });
    await topics.ensure('db.public.events', admin);

    expect(created).toEqual([]);
  });

  it('refuses an override that comes after the topic was checked, and creates nothing more', async () => {
    const topics = creation();
    const { admin, created } = fakeAdmin();
    const checking = topics.ensure('db.public.events', admin);

    const whileChecking = topics.override('db.public.events', { 'cleanup.policy': 'delete' });
    await checking;
    const afterwards = topics.override('db.public.events', { 'cleanup.policy': 'delete' });

    expect([whileChecking, afterwards]).toEqual([false, false]);
    expect(created.map((t) => configsOf(t)['cleanup.policy'])).toEqual(['compact']);
  });
});
