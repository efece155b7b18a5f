import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ApiKey,
  allSchemas,
  schemaFor,
  supportedApiVersions,
} from '../../../src/protocol/api-keys.ts';
import { defaultBody } from '../../../src/protocol/codec.ts';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  encodeResponseChunks,
  peekCorrelationId,
} from '../../../src/protocol/framing.ts';
import { requestHeaderVersion, responseHeaderVersion } from '../../../src/protocol/headers.ts';

const joinV5 = {
  groupId: 'connect-cluster',
  sessionTimeoutMs: 10000,
  rebalanceTimeoutMs: 60000,
  memberId: '',
  groupInstanceId: null,
  protocolType: 'connect',
  protocols: [{ name: 'sessioned', metadata: Buffer.from('meta') }],
  reason: null,
};

describe('request and response framing', () => {
  it('round-trips a request through encodeRequest and decodeRequest', () => {
    const frame = encodeRequest({
      apiKey: ApiKey.JoinGroup,
      apiVersion: 5,
      correlationId: 11,
      clientId: 'worker-1',
      body: joinV5,
    });
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    expect(decodeRequest(frame.subarray(4))).toEqual({
      ok: true,
      request: { apiKey: 11, apiVersion: 5, correlationId: 11, clientId: 'worker-1', body: joinV5 },
    });
  });

  it('round-trips a flexible response (header v1) through encodeResponse and decodeResponse', () => {
    const body = {
      throttleTimeMs: 0,
      errorCode: 0,
      generationId: 3,
      protocolType: 'connect',
      protocolName: 'sessioned',
      leader: 'a',
      skipAssignment: false,
      memberId: 'a',
      members: [],
    };
    const frame = encodeResponse({
      apiKey: ApiKey.JoinGroup,
      apiVersion: 7,
      correlationId: 5,
      body,
    });
    expect(peekCorrelationId(frame.subarray(4))).toBe(5);
    expect(decodeResponse(frame.subarray(4), ApiKey.JoinGroup, 7)).toEqual({
      ok: true,
      correlationId: 5,
      body,
    });
  });

  it('chooses header versions by flexibility, and always response header v0 for ApiVersions', () => {
    const join = schemaFor(ApiKey.JoinGroup)!;
    expect([requestHeaderVersion(join, 5), requestHeaderVersion(join, 6)]).toEqual([1, 2]);
    expect([responseHeaderVersion(join, 5), responseHeaderVersion(join, 6)]).toEqual([0, 1]);
    const apiVersions = schemaFor(ApiKey.ApiVersions)!;
    expect([requestHeaderVersion(apiVersions, 3), responseHeaderVersion(apiVersions, 3)]).toEqual([
      2, 0,
    ]);
  });

  it('reports an unsupported ApiVersions version with the correlation id, so the v0 refusal can be sent', () => {
    const frame = Buffer.from([0, 18, 0, 99, 0, 0, 0, 42, 0, 1, 0x61, 0x7f, 0x7f]);
    const decoded = decodeRequest(frame);
    expect(decoded).toMatchObject({
      ok: false,
      error: {
        kind: 'unsupported-version',
        apiKey: 18,
        apiVersion: 99,
        correlationId: 42,
        clientId: 'a',
      },
    });
    const refusal = encodeResponse({
      apiKey: ApiKey.ApiVersions,
      apiVersion: 0,
      correlationId: 42,
      body: { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }] },
    });
    expect(refusal).toEqual(
      Buffer.from([0, 0, 0, 16, 0, 0, 0, 42, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3]),
    );
  });

  it('accepts, as a client, the v0-format ApiVersions refusal to a newer request version', () => {
    const refusal = encodeResponse({
      apiKey: ApiKey.ApiVersions,
      apiVersion: 0,
      correlationId: 4,
      body: { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] },
    });
    expect(decodeResponse(refusal.subarray(4), ApiKey.ApiVersions, 3)).toMatchObject({
      ok: true,
      correlationId: 4,
      body: { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] },
    });
  });

  it('reports an unknown api key as unsupported-api with the correlation id', () => {
    expect(decodeRequest(Buffer.from([0, 200, 0, 0, 0, 0, 0, 9, 0xff, 0xff]))).toMatchObject({
      ok: false,
      error: { kind: 'unsupported-api', apiKey: 200, correlationId: 9 },
    });
  });

  it('reports frames shorter than the header prefix as malformed without a correlation id', () => {
    expect(decodeRequest(Buffer.from([0, 3, 0]))).toMatchObject({
      ok: false,
      error: { kind: 'malformed', correlationId: null },
    });
  });

  it('reports trailing bytes after a body as malformed', () => {
    const frame = encodeRequest({
      apiKey: ApiKey.Heartbeat,
      apiVersion: 0,
      correlationId: 1,
      clientId: null,
      body: { groupId: 'g', generationId: 1, memberId: 'm' },
    });
    const decoded = decodeRequest(Buffer.concat([frame.subarray(4), Buffer.from([0])]));
    expect(decoded).toMatchObject({
      ok: false,
      error: { kind: 'malformed', correlationId: 1, reason: expect.stringMatching(/trailing/) },
    });
  });

  it('reports every truncation of every request as malformed, never throwing', () => {
    for (const schema of allSchemas) {
      for (let v = schema.minVersion; v <= schema.maxVersion; v++) {
        const frame = encodeRequest({
          apiKey: schema.apiKey,
          apiVersion: v,
          correlationId: 3,
          clientId: 'c',
          body: defaultBody(schema, v, 'request'),
        }).subarray(4);
        for (let cut = 0; cut < frame.length; cut++) {
          const decoded = decodeRequest(frame.subarray(0, cut));
          expect(decoded.ok).toBe(false);
          if (cut >= 8)
            expect(decoded).toMatchObject({ error: { kind: 'malformed', correlationId: 3 } });
        }
      }
    }
  });

  it('never throws on random frames, and never allocates beyond the frame (fuzz)', () => {
    const versions = supportedApiVersions();
    const header = fc
      .constantFrom(...versions)
      .chain((a) =>
        fc.tuple(fc.constant(a.apiKey), fc.integer({ min: a.minVersion, max: a.maxVersion })),
      );
    fc.assert(
      fc.property(header, fc.uint8Array({ maxLength: 64 }), ([apiKey, version], tail) => {
        const frame = Buffer.concat([
          Buffer.from([apiKey >> 8, apiKey & 0xff, 0, version, 0, 0, 0, 1]),
          Buffer.from(tail),
        ]);
        const decoded = decodeRequest(frame);
        if (!decoded.ok) expect(decoded.error.correlationId).toBe(1);
      }),
      { numRuns: 3000 },
    );
  });

  it('never throws on corrupted copies of valid requests of every api and version (fuzz)', () => {
    const frames = allSchemas.flatMap((schema) =>
      Array.from(
        { length: schema.maxVersion - schema.minVersion + 1 },
        (_, i) => schema.minVersion + i,
      ).map((v) =>
        encodeRequest({
          apiKey: schema.apiKey,
          apiVersion: v,
          correlationId: 8,
          clientId: 'fuzz',
          body: defaultBody(schema, v, 'request'),
        }).subarray(4),
      ),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...frames),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (frame, edits) => {
          const corrupt = Buffer.from(frame);
          // Keep the api key and version so the body decoder is what gets exercised.
          for (const [at, value] of edits)
            if (corrupt.length > 4) corrupt[4 + (at % (corrupt.length - 4))] = value;
          const decoded = decodeRequest(corrupt);
          if (!decoded.ok) expect(decoded.error.kind).toBe('malformed');
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('passes a large records field to the socket uncopied', () => {
    const records = Buffer.alloc(16384, 1);
    const chunks = encodeResponseChunks({
      apiKey: ApiKey.Fetch,
      apiVersion: 11,
      correlationId: 1,
      body: { responses: [{ topic: 't', partitions: [{ partitionIndex: 0, records }] }] },
    });
    expect(chunks).toContain(records);
    const whole = Buffer.concat(chunks);
    expect(whole.readInt32BE(0)).toBe(whole.length - 4);
    const decoded = decodeResponse(whole.subarray(4), ApiKey.Fetch, 11);
    expect(decoded.ok && decoded.body.responses[0].partitions[0].records).toEqual(records);
  });

  it('throws on programming errors when encoding: unknown api, unimplemented version, null where not nullable', () => {
    expect(() =>
      encodeRequest({ apiKey: 200, apiVersion: 0, correlationId: 1, clientId: null, body: {} }),
    ).toThrow(RangeError);
    expect(() =>
      encodeRequest({ apiKey: 3, apiVersion: 99, correlationId: 1, clientId: null, body: {} }),
    ).toThrow(RangeError);
    expect(() =>
      encodeRequest({
        apiKey: 12,
        apiVersion: 0,
        correlationId: 1,
        clientId: null,
        body: { groupId: null },
      }),
    ).toThrow(TypeError);
  });
});

describe('the api registry', () => {
  it('lists every implemented api with its full range, narrowed or removed on request', () => {
    const all = supportedApiVersions();
    expect(all).toHaveLength(39);
    expect(all.find((a) => a.apiKey === ApiKey.Produce)).toEqual({
      apiKey: 0,
      minVersion: 0,
      maxVersion: 11,
    });
    const narrowed = supportedApiVersions({ [ApiKey.Produce]: { max: 8 }, [ApiKey.EndTxn]: null });
    expect(narrowed.find((a) => a.apiKey === ApiKey.Produce)).toEqual({
      apiKey: 0,
      minVersion: 0,
      maxVersion: 8,
    });
    expect(narrowed.find((a) => a.apiKey === ApiKey.EndTxn)).toBeUndefined();
  });

  it('covers at least the versions the broker advertises (KAFKA-CLIENTS.md)', () => {
    const advertise: Record<number, number> = {
      0: 8,
      1: 11,
      2: 5,
      3: 8,
      8: 7,
      9: 5,
      10: 2,
      11: 5,
      12: 3,
      13: 3,
      14: 3,
      15: 4,
      16: 2,
      17: 1,
      18: 3,
      19: 4,
      20: 3,
      22: 1,
      24: 2,
      25: 2,
      26: 2,
      28: 2,
      32: 3,
      36: 1,
    };
    for (const [key, max] of Object.entries(advertise)) {
      const s = schemaFor(Number(key))!;
      expect(s.minVersion).toBe(0);
      expect(s.maxVersion).toBeGreaterThanOrEqual(max);
    }
  });
});
