import { describe, expect, it } from 'vitest';
import {
  apiVersionsAnswer,
  FINALIZED_FEATURES_EPOCH,
  METADATA_VERSION,
} from '../../../../src/broker/handlers/api-versions.ts';
import { ApiKey, schemaFor } from '../../../../src/protocol/api-keys.ts';
import { decodeBody } from '../../../../src/protocol/codec.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { Reader } from '../../../../src/protocol/reader.ts';
import { useRawBroker } from './raw-client.ts';

const { client } = useRawBroker();

const software = { clientSoftwareName: 'raw-client', clientSoftwareVersion: '1.0.0' };

/** An ApiVersions request frame (size prefix included) at a version the codec cannot write. */
function futureApiVersionsFrame(version: number, correlationId: number): Buffer {
  const body = Buffer.from([
    0,
    ApiKey.ApiVersions,
    0,
    version,
    0,
    0,
    0,
    correlationId,
    0,
    1,
    0x78,
    0,
    2,
    0x61,
    2,
    0x31,
    0,
  ]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

describe('ApiVersions', () => {
  it.each([3, 4])(
    'v%i is answered in the version asked, with metadata.version and group.version as a single-node KRaft broker reports them',
    async (v) => {
      const c = await client();
      const res = await c.request(ApiKey.ApiVersions, v, software);
      // group.version's supported range starts at 0: listed from v4 only (KAFKA-17492).
      const groupVersion = { name: 'group.version', minVersion: 0, maxVersion: 1 };
      expect(res).toMatchObject({
        errorCode: ErrorCode.NONE,
        throttleTimeMs: 0,
        supportedFeatures: [
          {
            name: 'metadata.version',
            minVersion: METADATA_VERSION.level,
            maxVersion: METADATA_VERSION.level,
          },
          ...(v >= 4 ? [groupVersion] : []),
        ],
        finalizedFeaturesEpoch: FINALIZED_FEATURES_EPOCH,
        finalizedFeatures: [
          {
            name: 'metadata.version',
            minVersionLevel: METADATA_VERSION.level,
            maxVersionLevel: METADATA_VERSION.level,
          },
          { name: 'group.version', minVersionLevel: 1, maxVersionLevel: 1 },
        ],
        zkMigrationReady: false,
      });
      expect(res.apiKeys).toContainEqual({
        apiKey: ApiKey.ApiVersions,
        minVersion: 0,
        maxVersion: 4,
      });
    },
  );

  it('keeps response header v0 in flexible v3: the error code follows the correlation id', async () => {
    const c = await client();
    const frame = await c.sendRaw(
      // size 20 · key 18 · v3 · correlation 7 · client id "x" · no header tags ·
      // compact "test" · compact "1" · no body tags
      Buffer.from([
        0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 7, 0, 1, 0x78, 0, 5, 0x74, 0x65, 0x73, 0x74, 2, 0x31, 0,
      ]),
      true,
    )!;
    expect(frame.readInt32BE(0)).toBe(7);
    expect(frame.readInt16BE(4)).toBe(ErrorCode.NONE);
    const body = decodeBody(schemaFor(ApiKey.ApiVersions)!, 3, 'response', new Reader(frame, 4));
    expect(body.ok).toBe(true);
  });

  it('answers a version the codec does not know in the v0 layout with UNSUPPORTED_VERSION (KIP-511), and stays usable', async () => {
    const c = await client();
    const frame = await c.sendRaw(futureApiVersionsFrame(5, 9), true)!;
    expect(frame.readInt32BE(0)).toBe(9);
    const body = decodeBody(schemaFor(ApiKey.ApiVersions)!, 0, 'response', new Reader(frame, 4));
    if (!body.ok) throw new Error(body.reason);
    expect(body.value.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(body.value.apiKeys).toContainEqual({
      apiKey: ApiKey.ApiVersions,
      minVersion: 0,
      maxVersion: 4,
    });
    expect((await c.request(ApiKey.ApiVersions, 4, software)).errorCode).toBe(ErrorCode.NONE);
  });

  it("answers v3 from a client that leaves its software name empty, as this repository's client does", async () => {
    const c = await client();
    const res = await c.request(ApiKey.ApiVersions, 3, {});
    expect(res.errorCode).toBe(ErrorCode.NONE);
  });

  it('omits a supported feature whose minimum level is 0 below v4 (KAFKA-17492) and lists it from v4', () => {
    const features = {
      supported: [
        { name: 'kraft.version', minVersion: 0, maxVersion: 1 },
        { name: 'metadata.version', minVersion: 7, maxVersion: 7 },
      ],
      finalized: [],
      finalizedEpoch: 0n,
    };
    const names = (v: number) =>
      (apiVersionsAnswer(v, [], features).supportedFeatures as { name: string }[]).map(
        (f) => f.name,
      );
    expect(names(3)).toEqual(['metadata.version']);
    expect(names(4)).toEqual(['kraft.version', 'metadata.version']);
  });
});
