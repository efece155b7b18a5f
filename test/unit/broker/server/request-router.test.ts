import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { encodeRequest } from '../../../../src/protocol/framing.ts';
import { useRawBroker } from './raw-client.ts';

const { client } = useRawBroker();

describe('request router', () => {
  it.each([0, 1, 2, 3, 4])(
    'ApiVersions v%i lists the advertised versions, from 0, transaction APIs up to their last pre-KIP-890 versions',
    async (v) => {
      const c = await client();
      const res = await c.request(ApiKey.ApiVersions, v, {
        clientSoftwareName: 'raw-client',
        clientSoftwareVersion: '1.0',
      });
      expect(res.errorCode).toBe(0);
      const ranges = Object.fromEntries(
        (res.apiKeys as Array<{ apiKey: number; minVersion: number; maxVersion: number }>).map(
          (r) => [r.apiKey, [r.minVersion, r.maxVersion]],
        ),
      );
      expect(ranges).toMatchObject({
        [ApiKey.Produce]: [0, 11],
        [ApiKey.Fetch]: [0, 17],
        [ApiKey.ListOffsets]: [0, 10],
        [ApiKey.Metadata]: [0, 12],
        [ApiKey.ApiVersions]: [0, 4],
        [ApiKey.CreateTopics]: [0, 7],
        [ApiKey.DeleteTopics]: [0, 6],
        [ApiKey.InitProducerId]: [0, 4],
        [ApiKey.AddPartitionsToTxn]: [0, 4],
        [ApiKey.AddOffsetsToTxn]: [0, 3],
        [ApiKey.EndTxn]: [0, 3],
        [ApiKey.TxnOffsetCommit]: [0, 3],
        [ApiKey.OffsetFetch]: [0, 9],
        [ApiKey.DescribeProducers]: [0, 0],
        [ApiKey.DescribeTransactions]: [0, 0],
        [ApiKey.ListTransactions]: [0, 1],
        [ApiKey.DescribeConfigs]: [0, 4],
        [ApiKey.SaslHandshake]: [0, 1],
      });
    },
  );

  it('closes the connection on a version it does not advertise, after answering earlier requests', async () => {
    const c = await client();
    const earlier = c.request(ApiKey.ApiVersions, 0, {});
    // SaslAuthenticate v0: the codec reads it, the broker has no handler and advertises none.
    c.send(ApiKey.SaslAuthenticate, 0, { authBytes: Buffer.alloc(0) });
    expect((await earlier).errorCode).toBe(0);
    await c.closed;
  });

  it('closes the connection on an unknown api key and on a malformed body', async () => {
    const unknown = await client();
    const frame = Buffer.alloc(4 + 10);
    frame.writeInt32BE(10, 0);
    frame.writeInt16BE(999, 4);
    unknown.sendRaw(frame);
    await unknown.closed;
    const malformed = await client();
    const good = encodeRequest({
      apiKey: ApiKey.Metadata,
      apiVersion: 1,
      correlationId: 1,
      clientId: 'x',
      body: { topics: null },
    });
    const cut = Buffer.concat([Buffer.alloc(4), good.subarray(4, good.length - 3)]);
    cut.writeInt32BE(cut.length - 4, 0);
    malformed.sendRaw(
      Buffer.concat([
        cut,
        encodeRequest({
          apiKey: ApiKey.Metadata,
          apiVersion: 4,
          correlationId: 9,
          clientId: 'x',
          body: { topics: [{ name: 'x' }] },
        }),
      ]),
    );
    await malformed.closed;
  });

  it('answers pipelined requests in order', async () => {
    const c = await client();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? c.request(ApiKey.ApiVersions, 2, {})
          : c.request(ApiKey.Metadata, 1, { topics: [] }),
      ),
    );
    for (const [i, a] of answers.entries()) expect('apiKeys' in a).toBe(i % 2 === 0);
  });

  it('refuses SASL with UNSUPPORTED_SASL_MECHANISM', async () => {
    const c = await client();
    expect(await c.request(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' })).toEqual({
      errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
      mechanisms: [],
    });
  });
});
