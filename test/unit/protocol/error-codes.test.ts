import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  errorByCode,
  errorByName,
  KafkaProtocolError,
  kafkaErrors,
} from '../../../src/protocol/error-codes.ts';

describe('Kafka error table', () => {
  it('has unique codes and names, from -1 upward without gaps', () => {
    const codes = kafkaErrors.map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(new Set(kafkaErrors.map((e) => e.name)).size).toBe(codes.length);
    expect(codes).toEqual(Array.from({ length: codes.length }, (_, i) => i - 1));
  });

  it('looks errors up by code and by name, with retriable flags as Kafka defines them', () => {
    expect(errorByCode(16)).toMatchObject({ name: 'NOT_COORDINATOR', retriable: true });
    expect(errorByCode(27)).toMatchObject({ name: 'REBALANCE_IN_PROGRESS', retriable: false });
    expect(errorByName('MEMBER_ID_REQUIRED')?.code).toBe(79);
    expect(ErrorCode.UNSUPPORTED_VERSION).toBe(35);
    expect(errorByCode(9999)).toMatchObject({
      code: 9999,
      name: 'UNKNOWN_ERROR_CODE',
      retriable: false,
    });
  });

  it('builds KafkaProtocolError values with code, name, retriable and message', () => {
    const e = new KafkaProtocolError(15);
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({
      code: 15,
      name: 'COORDINATOR_NOT_AVAILABLE',
      retriable: true,
      message: 'The coordinator is not available.',
    });
    expect(
      KafkaProtocolError.fromName('ILLEGAL_GENERATION', 'generation 3 is stale'),
    ).toMatchObject({ code: 22, message: 'generation 3 is stale' });
  });
});
