/**
 * Static group membership (KIP-345) with librdkafka 2.0 through confluent-kafka-python
 * (Debian python3-confluent-kafka, run with the system Python): when a second consumer
 * takes over a group.instance.id, the first must be fenced with FENCED_INSTANCE_ID,
 * which librdkafka raises as a fatal error, instead of rejoining as a zombie that
 * steals the instance back (as librdkafka's own 0102 static-membership test expects).
 * The two consumers run in helpers/static-members.py, which prints their events.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useBroker } from '../helpers/broker.ts';
import { useProcess } from '../helpers/processes.ts';
import { kafka } from './helpers/kafkajs.ts';

const script = fileURLToPath(new URL('./helpers/static-members.py', import.meta.url));

interface MemberEvent {
  event: string;
  consumer?: string;
  fatal?: boolean;
  name?: string;
  text?: string;
}

describe('static group membership with librdkafka', () => {
  it('fences the consumer whose group.instance.id was taken over, and it does not rejoin', async () => {
    const b = await useBroker();
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'fenced', numPartitions: 2 }] });
      const members = useProcess('/usr/bin/python3', [
        script,
        b.bootstrap,
        'static-group',
        'fenced',
        'instance-x',
      ]);
      await members.waitForLine('"event": "replaced"');

      // The broker's view while the new holder is alive: it alone is in the group.
      const { groups } = await admin.describeGroups(['static-group']);
      expect(groups[0]).toMatchObject({ state: 'Stable', protocolType: 'consumer' });
      expect(groups[0]!.members.map((m) => m.clientId)).toEqual(['fence-b']);
      await members.stop();

      const printed: MemberEvent[] = members
        .output()
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
      // What happened while both ran; closing fence-b revokes its partitions.
      const closing = printed.findIndex((e) => e.event === 'closing');
      const events = closing === -1 ? printed : printed.slice(0, closing);
      const of = (consumer: string, event: string) =>
        events.filter((e) => e.consumer === consumer && e.event === event);
      const fatal = of('fence-a', 'error').filter((e) => e.fatal);
      expect(fatal.length, JSON.stringify(events)).toBeGreaterThan(0);
      expect(fatal[0]).toMatchObject({ name: '_FATAL' });
      expect(fatal[0]!.text).toContain('Static consumer fenced by other consumer');
      // fence-a was assigned once and never came back; fence-b never lost its partitions.
      expect(of('fence-a', 'assigned')).toHaveLength(1);
      expect(of('fence-b', 'assigned')).toHaveLength(1);
      expect(of('fence-b', 'revoked')).toHaveLength(0);
    } finally {
      await admin.disconnect();
    }
  });
});
