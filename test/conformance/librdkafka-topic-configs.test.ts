/**
 * librdkafka 2.0 (Debian's confluent-kafka-python and librdkafka1, system Python)
 * against the embedded broker: every topic config through AdminClient's CreateTopics
 * and DescribeConfigs, tiered storage refused by name, INVALID_TIMESTAMP in the
 * delivery report of the record outside message.timestamp.before.max.ms, and
 * ListConsumerGroups (ListGroups v4, with librdkafka 2.0's repeated tag section) with
 * and without a state filter. The clients run in helpers/topic-configs.py.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useBroker } from '../helpers/broker.ts';
import { useProcess } from '../helpers/processes.ts';

const script = fileURLToPath(new URL('./helpers/topic-configs.py', import.meta.url));

interface Event {
  event: string;
  [key: string]: unknown;
}

async function run(scenario: string, ...args: string[]): Promise<Event[]> {
  const b = await useBroker({ config: { 'group.initial.rebalance.delay.ms': 0 } });
  const p = useProcess('/usr/bin/python3', [script, b.bootstrap, scenario, ...args]);
  await p.exited;
  const events: Event[] = p
    .output()
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  expect(events.at(-1), p.output().join('\n')).toEqual({ event: 'done' });
  return events;
}

/** librdkafka's ConfigSource values. */
const TOPIC_CONFIG = 1;
const DEFAULT_CONFIG = 5;

const SOME_OF_EACH: Record<string, string> = {
  'cleanup.policy': 'compact',
  'compression.type': 'producer',
  'compression.zstd.level': '9',
  'max.message.bytes': '2000000',
  'message.format.version': '2.8',
  'message.timestamp.type': 'LogAppendTime',
  'message.timestamp.before.max.ms': '86400000',
  'message.timestamp.after.max.ms': '3600000',
  'min.insync.replicas': '1',
  'min.compaction.lag.ms': '10',
  'max.compaction.lag.ms': '600000',
  'segment.jitter.ms': '0',
  preallocate: 'false',
  'file.delete.delay.ms': '2000',
  'unclean.leader.election.enable': 'true',
  'local.retention.ms': '-2',
  'remote.storage.enable': 'false',
};

describe('librdkafka topic configs', () => {
  it('AdminClient creates a topic with Kafka topic configs and describes every config with its source and default', async () => {
    const events = await run('configs', JSON.stringify(SOME_OF_EACH));
    expect(events.filter((e) => e.event === 'created')).toEqual([
      { event: 'created', error: null },
      { event: 'created', error: null },
    ]);
    const described = Object.fromEntries(
      events
        .filter((e) => e.event === 'described')
        .map((e) => [
          e.topic,
          e.entries as Record<string, { value: string; source: number; is_default: boolean }>,
        ]),
    );
    for (const [key, value] of Object.entries(SOME_OF_EACH)) {
      expect(described['every-config'][key], key).toEqual({
        value,
        source: TOPIC_CONFIG,
        is_default: false,
      });
    }
    const bare = described['bare-config'];
    expect(Object.keys(bare)).toHaveLength(35);
    expect(bare['compression.type']).toEqual({
      value: 'producer',
      source: DEFAULT_CONFIG,
      is_default: true,
    });
    expect(bare['message.timestamp.before.max.ms']).toEqual({
      value: '9223372036854775807',
      source: DEFAULT_CONFIG,
      is_default: true,
    });
    expect(bare['local.retention.bytes']).toEqual({
      value: '-2',
      source: DEFAULT_CONFIG,
      is_default: true,
    });
    const refused = events.find((e) => e.event === 'refused');
    expect(String(refused?.error)).toMatch(/INVALID_CONFIG/);
    expect(String(refused?.error)).toMatch(/not supported: remote\.storage\.enable=true/);
  });

  it('a record older than message.timestamp.before.max.ms fails its delivery with INVALID_TIMESTAMP; a fresh one is delivered', async () => {
    const events = await run('timestamps');
    expect(events.filter((e) => e.event === 'delivery')).toEqual([
      { event: 'delivery', value: 'old', error: 'INVALID_TIMESTAMP' },
      { event: 'delivery', value: 'fresh', error: null },
    ]);
  });

  it('ListConsumerGroups lists the group with its state, and filters by state', async () => {
    const events = await run('list-groups');
    const listed = Object.fromEntries(
      events.filter((e) => e.event === 'listed').map((e) => [e.label, e]),
    );
    expect(listed.all).toMatchObject({ groups: { 'listed-group': 'Stable' }, errors: [] });
    expect(listed.stable).toMatchObject({ groups: { 'listed-group': 'Stable' }, errors: [] });
    expect(listed.empty).toMatchObject({ groups: {}, errors: [] });
  });
});
