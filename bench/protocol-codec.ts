/**
 * Protocol codec throughput: decode + encode of the two messages on the broker's hot
 * path, each next to a limit measured in the same run (copying the same number of
 * bytes once, which any codec must at least read).
 *
 *   npx tsx bench/protocol-codec.ts
 *
 * Prints `name: value unit` lines.
 */
import { ApiKey } from '../src/protocol/api-keys.ts';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  encodeResponseChunks,
} from '../src/protocol/framing.ts';

function opsPerSecond(fn: () => void, minMs = 1000): number {
  for (let i = 0; i < 200; i++) fn();
  let ops = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 100; i++) fn();
    ops += 100;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (ops * 1000) / elapsed;
}

function report(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value >= 100 ? Math.round(value) : value.toFixed(2)} ${unit}`);
}

// Produce v8 with one 16 KiB records field.
const records = Buffer.alloc(16 * 1024, 0xab);
const produceFrame = encodeRequest({
  apiKey: ApiKey.Produce,
  apiVersion: 8,
  correlationId: 1,
  clientId: 'bench',
  body: {
    transactionalId: null,
    acks: -1,
    timeoutMs: 30000,
    topicData: [{ name: 'bench', partitionData: [{ index: 0, records }] }],
  },
}).subarray(4);

const produceOps = opsPerSecond(() => {
  const d = decodeRequest(produceFrame);
  if (!d.ok) throw new Error(d.error.reason);
  encodeRequest({ ...d.request, body: d.request.body });
});
const copyTarget = Buffer.allocUnsafe(produceFrame.length);
const produceCopyOps = opsPerSecond(() => {
  produceFrame.copy(copyTarget);
});
report('produce_v8_16KiB_decode_encode', produceOps, 'ops/s');
report('produce_v8_16KiB_memcpy_limit', produceCopyOps, 'ops/s');
report('produce_v8_16KiB_ratio_to_memcpy', produceOps / produceCopyOps, 'x');

// Fetch v11 response with 100 partitions of 1 KiB records each.
const partitionRecords = Buffer.alloc(1024, 0xcd);
const fetchBody = {
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 0,
  responses: [
    {
      topic: 'bench',
      partitions: Array.from({ length: 100 }, (_, i) => ({
        partitionIndex: i,
        errorCode: 0,
        highWatermark: 1000n,
        lastStableOffset: 1000n,
        logStartOffset: 0n,
        abortedTransactions: [],
        preferredReadReplica: -1,
        records: partitionRecords,
      })),
    },
  ],
};
const fetchFrame = encodeResponse({
  apiKey: ApiKey.Fetch,
  apiVersion: 11,
  correlationId: 1,
  body: fetchBody,
}).subarray(4);
const fetchOps = opsPerSecond(() => {
  const d = decodeResponse(fetchFrame, ApiKey.Fetch, 11);
  if (!d.ok) throw new Error(d.reason);
  encodeResponse({ apiKey: ApiKey.Fetch, apiVersion: 11, correlationId: 1, body: d.body });
});
const fetchEncodeChunksOps = opsPerSecond(() => {
  encodeResponseChunks({ apiKey: ApiKey.Fetch, apiVersion: 11, correlationId: 1, body: fetchBody });
});
const fetchCopyTarget = Buffer.allocUnsafe(fetchFrame.length);
const fetchCopyOps = opsPerSecond(() => {
  fetchFrame.copy(fetchCopyTarget);
});
report('fetch_v11_100_partitions_decode_encode', fetchOps, 'ops/s');
report('fetch_v11_100_partitions_encode_only', fetchEncodeChunksOps, 'ops/s');
report('fetch_v11_100_partitions_memcpy_limit', fetchCopyOps, 'ops/s');
report('fetch_v11_100_partitions_ratio_to_memcpy', fetchOps / fetchCopyOps, 'x');
report('fetch_v11_frame_bytes', fetchFrame.length, 'bytes');
