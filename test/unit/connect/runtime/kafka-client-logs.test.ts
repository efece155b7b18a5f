import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createKafka } from '../../../../src/connect/runtime/kafka-clients.ts';

function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, stream) };
}

describe("the worker's kafkajs clients", () => {
  it("log kafkajs's warnings, but not its line about bounded retries of an idempotent producer", () => {
    const { lines, logger } = capturingLogger();
    const kafka = createKafka({ 'bootstrap.servers': ['127.0.0.1:1'] }, logger);

    kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    kafka.producer({ idempotent: true, maxInFlightRequests: 5 });

    expect(lines.join('')).not.toContain('Limiting retries for the idempotent producer');
    // kafkajs's other warnings still come through. (Its one other producer warning, of
    // the v2 partitioner, is given once per process, so an earlier test file in the
    // same worker may have had it: say one through kafkajs's own logger instead.)
    kafka.logger().warn('a kafkajs warning');
    expect(
      lines.some((l) => JSON.parse(l).level === 40 && l.includes('a kafkajs warning')),
    ).toBe(true);
  });
});
