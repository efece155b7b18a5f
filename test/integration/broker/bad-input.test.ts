import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import { encodeRequest } from '../../../src/protocol/framing.ts';
import { encodeBatch } from '../../../src/protocol/record-batch.ts';
import { getLogger } from '../../../src/util/logger.ts';
import { useBroker } from '../../helpers/broker.ts';
import { RawClient } from '../../unit/broker/server/raw-client.ts';

/** Writes `bytes` on a fresh connection, then waits until the broker closes it or a round trip on a bystander completes. */
async function hit(port: number, bytes: Buffer, bystander: RawClient): Promise<void> {
  const c = await RawClient.connect(port);
  c.sendRaw(bytes);
  // The bystander's answer proves the broker processed everything sent before it.
  await bystander.request(ApiKey.ApiVersions, 2, {});
  c.close();
}

describe('bad input on the broker port', () => {
  it('random bytes and truncated or corrupted frames do not crash the broker, and other clients keep being served', async () => {
    const b = await useBroker();
    // Every refused connection is logged as a warning; hundreds of them would bury the test output.
    const serverLogger = getLogger('broker.server');
    const level = serverLogger.level;
    serverLogger.level = 'error';
    const bystander = await RawClient.connect(b.port);
    try {
      await bystander.request(ApiKey.Metadata, 8, {
        topics: [{ name: 'fuzz' }],
        allowAutoTopicCreation: true,
      });
      const valid = [
        encodeRequest({
          apiKey: ApiKey.Metadata,
          apiVersion: 8,
          correlationId: 1,
          clientId: 'f',
          body: { topics: [{ name: 'fuzz' }] },
        }),
        encodeRequest({
          apiKey: ApiKey.Produce,
          apiVersion: 7,
          correlationId: 2,
          clientId: 'f',
          body: {
            transactionalId: null,
            acks: 1,
            timeoutMs: 1000,
            topicData: [
              {
                name: 'fuzz',
                partitionData: [
                  {
                    index: 0,
                    records: encodeBatch({
                      records: [{ timestamp: 1, key: Buffer.from('k'), value: Buffer.from('v') }],
                    }),
                  },
                ],
              },
            ],
          },
        }),
        encodeRequest({
          apiKey: ApiKey.ApiVersions,
          apiVersion: 3,
          correlationId: 3,
          clientId: 'f',
          body: { clientSoftwareName: 'f', clientSoftwareVersion: '1' },
        }),
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            // Random bytes, with and without a plausible size prefix.
            fc.uint8Array({ minLength: 1, maxLength: 300 }).map((a) => Buffer.from(a)),
            fc.uint8Array({ minLength: 0, maxLength: 300 }).map((a) => {
              const size = Buffer.alloc(4);
              size.writeInt32BE(a.length);
              return Buffer.concat([size, Buffer.from(a)]);
            }),
            // A valid request cut short, with its size prefix fixed to match.
            fc.tuple(fc.constantFrom(...valid), fc.nat()).map(([req, n]) => {
              const cut = Buffer.from(req.subarray(0, 4 + (n % (req.length - 4))));
              cut.writeInt32BE(cut.length - 4, 0);
              return cut;
            }),
            // A valid request with bytes flipped.
            fc
              .tuple(
                fc.constantFrom(...valid),
                fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), {
                  minLength: 1,
                  maxLength: 8,
                }),
              )
              .map(([req, flips]) => {
                const copy = Buffer.from(req);
                for (const [at, x] of flips) copy[4 + (at % (copy.length - 4))]! ^= x;
                return copy;
              }),
          ),
          async (bytes) => {
            await hit(b.port, bytes, bystander);
          },
        ),
        { numRuns: 300 },
      );
      // The connection opened before the fuzzing is still served, and so is a new one.
      expect(
        (await bystander.request(ApiKey.Metadata, 8, { topics: [{ name: 'fuzz' }] })).topics[0]
          .errorCode,
      ).toBe(0);
      const fresh = await RawClient.connect(b.port);
      expect((await fresh.request(ApiKey.ApiVersions, 2, {})).errorCode).toBe(0);
      fresh.close();
    } finally {
      bystander.close();
      serverLogger.level = level;
    }
  });
});
