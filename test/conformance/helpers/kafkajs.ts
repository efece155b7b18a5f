/**
 * kafkajs clients for conformance tests: quiet logging, short retries, and the
 * snappy, lz4 and zstd codecs registered from the installed codec packages (kafkajs
 * ships only gzip). The codecs are src/protocol/compression.ts's, which use the
 * snappy, lz4-napi and zstd-napi packages; what they write is checked by reading it
 * back with librdkafka (kcat), an independent implementation.
 */
import { CompressionCodecs, CompressionTypes, Kafka, type KafkaConfig, logLevel } from 'kafkajs';
import { CompressionCodec, compress, decompress } from '../../../src/protocol/compression.ts';

function codec(id: CompressionCodec) {
  return () => ({
    compress: async (encoder: { buffer: Buffer }) => compress(id, encoder.buffer),
    decompress: async (buffer: Buffer) => decompress(id, buffer),
  });
}

CompressionCodecs[CompressionTypes.Snappy] = codec(CompressionCodec.snappy);
CompressionCodecs[CompressionTypes.LZ4] = codec(CompressionCodec.lz4);
CompressionCodecs[CompressionTypes.ZSTD] = codec(CompressionCodec.zstd);

export function kafka(bootstrap: string, config: Partial<KafkaConfig> = {}): Kafka {
  return new Kafka({
    clientId: 'conformance',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 50, maxRetryTime: 500 },
    ...config,
  });
}
