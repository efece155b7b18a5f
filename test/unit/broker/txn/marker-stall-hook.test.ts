/** The test-only CONNECT_TEST_STALL_MARKERS hook is off unless set, and never half-read. */
import { describe, expect, it } from 'vitest';
import { markerStallHookFrom } from '../../../../src/broker/txn/marker-stall-hook.ts';
import { getLogger } from '../../../../src/util/logger.ts';

// The hook warns when armed; that is expected here.
const logger = getLogger('test').child({}, { level: 'silent' });

describe('CONNECT_TEST_STALL_MARKERS', () => {
  it('is off when unset', () => {
    expect(markerStallHookFrom({}, logger)).toBeUndefined();
  });

  it('gives each transaction its limit in turn, then none', () => {
    const hook = markerStallHookFrom({ CONNECT_TEST_STALL_MARKERS: '3,0,12' }, logger)!;
    expect([hook.nextLimit(), hook.nextLimit(), hook.nextLimit(), hook.nextLimit()]).toEqual([
      3,
      0,
      12,
      undefined,
    ]);
  });

  it.each(['', 'yes', '1,', '-1', '1.5', ' 2'])('refuses %j, naming the variable', (value) => {
    expect(() => markerStallHookFrom({ CONNECT_TEST_STALL_MARKERS: value }, logger)).toThrow(
      /CONNECT_TEST_STALL_MARKERS must be a comma-separated list of whole numbers/,
    );
  });
});
