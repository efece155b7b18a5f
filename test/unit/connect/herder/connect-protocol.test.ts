import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ConnectAssignment,
  ConnectProtocolError,
  decodeAssignment,
  decodeMetadata,
  emptyAssignment,
  encodeAssignment,
  encodeMetadata,
  joinProtocols,
} from '../../../../src/connect/herder/connect-protocol.ts';

/** Bytes written out field by field from Kafka's Schema definitions (big-endian). */
function hex(...parts: string[]): Buffer {
  return Buffer.from(parts.join('').replace(/\s+/g, ''), 'hex');
}
function str(s: string): string {
  return Buffer.byteLength(s).toString(16).padStart(4, '0') + Buffer.from(s).toString('hex');
}

const URL = 'http://w1:8083';

describe('connect protocol metadata', () => {
  it('v0 ("default") is version, url and config offset, as ConnectProtocol writes it', () => {
    const bytes = hex('0000', str(URL), '0000000000000005');
    expect(encodeMetadata({ version: 0, url: URL, configOffset: 5, allocation: null })).toEqual(
      bytes,
    );
    expect(decodeMetadata(bytes)).toEqual({
      version: 0,
      url: URL,
      configOffset: 5,
      allocation: null,
    });
  });

  it('v1 ("compatible") appends the current allocation as nullable bytes, null when empty', () => {
    const bytes = hex('0001', str(URL), 'ffffffffffffffff', 'ffffffff');
    expect(encodeMetadata({ version: 1, url: URL, configOffset: -1, allocation: null })).toEqual(
      bytes,
    );
    expect(decodeMetadata(bytes).allocation).toBeNull();
  });

  it('v2 ("sessioned") embeds the allocation as a v2 assignment', () => {
    const allocation: ConnectAssignment = {
      ...emptyAssignment(2),
      leader: 'm1',
      leaderUrl: URL,
      configOffset: 3,
      connectors: ['c'],
      tasks: [{ connector: 'c', task: 0 }],
    };
    const inner = hex(
      '0002', // version
      '0000', // error
      str('m1'),
      str(URL),
      '0000000000000003',
      '00000001', // one connector entry
      str('c'),
      '00000002ffffffff00000000', // tasks [-1, 0]
      '00000000', // revoked: empty array
      '00000000', // delay
    );
    const bytes = hex(
      '0002',
      str(URL),
      '0000000000000003',
      inner.length.toString(16).padStart(8, '0'),
      inner.toString('hex'),
    );
    expect(encodeMetadata({ version: 2, url: URL, configOffset: 3, allocation })).toEqual(bytes);
    expect(decodeMetadata(bytes)).toEqual({ version: 2, url: URL, configOffset: 3, allocation });
  });

  it('refuses a negative version, and truncated bytes, with a ConnectProtocolError', () => {
    expect(() => decodeMetadata(hex('ffff', str(URL), '0000000000000000'))).toThrow(
      ConnectProtocolError,
    );
    expect(() => decodeMetadata(hex('0000', str(URL), '0000'))).toThrow(
      /malformed connect worker metadata/,
    );
  });

  it('reads a v1 metadata without the allocation field (tolerated missing field)', () => {
    expect(decodeMetadata(hex('0001', str(URL), '0000000000000009')).allocation).toBeNull();
  });

  it('lists protocols most preferred first, as Connect does for each mode', () => {
    const state = { url: URL, configOffset: 1, allocation: null };
    expect(joinProtocols('sessioned', state).map((p) => p.name)).toEqual([
      'sessioned',
      'compatible',
      'default',
    ]);
    expect(joinProtocols('compatible', state).map((p) => p.name)).toEqual([
      'compatible',
      'default',
    ]);
    expect(joinProtocols('eager', state).map((p) => p.name)).toEqual(['default']);
    expect(joinProtocols('sessioned', state)[2]!.metadata).toEqual(
      hex('0000', str(URL), '0000000000000001'),
    );
  });
});

describe('connect protocol assignment', () => {
  it('v0 lists connector -1 first, then tasks, grouped by connector', () => {
    const bytes = hex(
      '0000',
      '0000',
      str('leader-1'),
      str(URL),
      '000000000000000a',
      '00000002',
      str('a'),
      '00000002ffffffff00000001',
      str('b'),
      '0000000100000000',
    );
    const a: ConnectAssignment = {
      ...emptyAssignment(0),
      leader: 'leader-1',
      leaderUrl: URL,
      configOffset: 10,
      connectors: ['a'],
      tasks: [
        { connector: 'a', task: 1 },
        { connector: 'b', task: 0 },
      ],
    };
    expect(encodeAssignment(a)).toEqual(bytes);
    expect(decodeAssignment(bytes)).toEqual(a);
  });

  it('v1 adds revoked connectors and tasks and the scheduled delay', () => {
    const bytes = hex(
      '0001',
      '0001', // CONFIG_MISMATCH
      str('m'),
      str('u'),
      '0000000000000007',
      '00000000',
      '00000001',
      str('c'),
      '00000002ffffffff00000003',
      '00002710', // 10000 ms
    );
    const a: ConnectAssignment = {
      ...emptyAssignment(1),
      error: 1,
      leader: 'm',
      leaderUrl: 'u',
      configOffset: 7,
      revokedConnectors: ['c'],
      revokedTasks: [{ connector: 'c', task: 3 }],
      delay: 10_000,
    };
    expect(encodeAssignment(a)).toEqual(bytes);
    expect(decodeAssignment(bytes)).toEqual(a);
  });

  it('reads null arrays and a missing delay as empty and 0, as Java tolerates them', () => {
    const bytes = hex(
      '0001',
      '0000',
      str('m'),
      str('u'),
      '0000000000000000',
      'ffffffff',
      'ffffffff',
    );
    const a = decodeAssignment(bytes);
    expect(a.connectors).toEqual([]);
    expect(a.revokedTasks).toEqual([]);
    expect(a.delay).toBe(0);
  });

  it('round-trips any assignment at versions 0 to 2', () => {
    const name = fc.string({ maxLength: 6 });
    const task = fc.record({ connector: name, task: fc.integer({ min: 0, max: 1000 }) });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.uniqueArray(name, { maxLength: 4 }),
        fc.array(task, { maxLength: 6 }),
        fc.uniqueArray(name, { maxLength: 3 }),
        fc.array(task, { maxLength: 4 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (version, connectors, tasks, revokedConnectors, revokedTasks, delay) => {
          const a: ConnectAssignment = {
            version,
            error: 0,
            leader: 'l',
            leaderUrl: 'http://x',
            configOffset: 42,
            connectors,
            tasks,
            revokedConnectors: version === 0 ? [] : revokedConnectors,
            revokedTasks: version === 0 ? [] : revokedTasks,
            delay: version === 0 ? 0 : delay,
          };
          const back = decodeAssignment(encodeAssignment(a));
          const norm = (x: ConnectAssignment) => ({
            ...x,
            connectors: [...x.connectors].sort(),
            tasks: x.tasks.map((t) => `${t.connector}/${t.task}`).sort(),
            revokedConnectors: [...x.revokedConnectors].sort(),
            revokedTasks: x.revokedTasks.map((t) => `${t.connector}/${t.task}`).sort(),
          });
          expect(norm(back)).toEqual(norm(a));
        },
      ),
    );
  });
});
