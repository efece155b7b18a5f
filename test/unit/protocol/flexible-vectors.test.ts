/**
 * Hand-built byte vectors for flexible versions, written from Kafka's protocol spec
 * (KIP-482): compact strings and arrays carry length + 1 as an unsigned varint, every
 * struct ends with a tagged-field section (count, then tag, size, bytes per field, in
 * ascending tag order), and unknown tags are skipped by their size.
 */
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
} from '../../../src/protocol/framing.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('flexible versions on the wire', () => {
  it('decodes an ApiVersions v3 request: header v2 (non-compact client id, tags) and a compact body', () => {
    const frame = hex(`
      0012 0003 00000007   0002 6162   00
      04 636c69   04 312e30   00`);
    const decoded = decodeRequest(frame);
    expect(decoded).toEqual({
      ok: true,
      request: {
        apiKey: 18,
        apiVersion: 3,
        correlationId: 7,
        clientId: 'ab',
        body: { clientSoftwareName: 'cli', clientSoftwareVersion: '1.0' },
      },
    });
    const encoded = encodeRequest({
      apiKey: 18,
      apiVersion: 3,
      correlationId: 7,
      clientId: 'ab',
      body: { clientSoftwareName: 'cli', clientSoftwareVersion: '1.0' },
    });
    expect(encoded.subarray(4)).toEqual(frame);
    expect(encoded.readInt32BE(0)).toBe(frame.length);
  });

  it('reads tagged fields of an ApiVersions v3 response, skips an unknown tag, and uses response header v0', () => {
    const body = hex(`
      0000
      02  0012 0000 0003 00
      00000000
      03
        00 08  02 02 66 0001 0002 00
        01 08  0000000000000005
        07 03  aabbcc`);
    const frame = Buffer.concat([hex('0000002a'), body]);
    const decoded = decodeResponse(frame, ApiKey.ApiVersions, 3);
    expect(decoded).toEqual({
      ok: true,
      correlationId: 42,
      body: {
        errorCode: 0,
        apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }],
        throttleTimeMs: 0,
        supportedFeatures: [{ name: 'f', minVersion: 1, maxVersion: 2 }],
        finalizedFeaturesEpoch: 5n,
        finalizedFeatures: [],
        zkMigrationReady: false,
      },
    });
    // Re-encoding writes only the known non-default tags, in tag order; no header tags.
    const again = encodeResponse({
      apiKey: 18,
      apiVersion: 3,
      correlationId: 42,
      body: (decoded as { body: Record<string, unknown> }).body,
    });
    expect(again.subarray(4)).toEqual(
      hex(`
        0000002a
        0000
        02  0012 0000 0003 00
        00000000
        02
          00 08  02 02 66 0001 0002 00
          01 08  0000000000000005`),
    );
  });

  it('writes a Fetch v12 partition with a tagged struct (currentLeader) and response header v1', () => {
    const res = encodeResponse({
      apiKey: ApiKey.Fetch,
      apiVersion: 12,
      correlationId: 1,
      body: {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: [
          {
            topic: 't',
            partitions: [
              {
                partitionIndex: 0,
                errorCode: 0,
                highWatermark: 3n,
                lastStableOffset: 3n,
                logStartOffset: 0n,
                currentLeader: { leaderId: 1, leaderEpoch: 4 },
                abortedTransactions: null,
                preferredReadReplica: -1,
                records: Buffer.from([0xee]),
              },
            ],
          },
        ],
      },
    });
    expect(res.subarray(4)).toEqual(
      hex(`
        00000001 00
        00000000 0000 00000000
        02 02 74
          02 00000000 0000 0000000000000003 0000000000000003 0000000000000000
             00 ffffffff 02 ee
             01 01 09 00000001 00000004 00
          00
        00`),
    );
  });

  it('encodes null compact arrays and nullable compact strings as 0', () => {
    const req = encodeRequest({
      apiKey: ApiKey.Metadata,
      apiVersion: 9,
      correlationId: 2,
      clientId: null,
      body: {
        topics: null,
        allowAutoTopicCreation: true,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      },
    });
    // size, header v2 (client id null = ffff, no tags), topics null (0), bools, tags.
    expect(req).toEqual(hex('00000010 0003 0009 00000002 ffff 00  00 01 00 00 00'));
  });
});
