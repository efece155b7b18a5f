import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { useBroker } from '../../helpers/broker.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

const FAILED = 'kafka_server_socket_server_metrics_failed_authentication_total';

describe('broker authentication metrics', () => {
  it('counts a SASL client refused by the plaintext broker as a failed authentication', async () => {
    const { broker, bootstrap } = await useBroker();
    const before = parsePrometheusText(await broker.metrics!());
    expect(sampleOf(before, FAILED, { listener: 'PLAINTEXT' })).toBe(0);

    const kafka = new Kafka({
      clientId: 'sasl-client',
      brokers: [bootstrap],
      sasl: { mechanism: 'plain', username: 'alice', password: 'secret' },
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    // The client is told why: the broker enables no SASL mechanism.
    await expect(admin.connect()).rejects.toThrow(/SASL|mechanism/i);
    await admin.disconnect();

    const after = parsePrometheusText(await broker.metrics!());
    expect(after.get(FAILED)?.type).toBe('counter');
    expect(sampleOf(after, FAILED, { listener: 'PLAINTEXT' })).toBeGreaterThanOrEqual(1);
  });
});
