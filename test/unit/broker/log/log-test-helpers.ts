/** Shared setup for the partition log tests: temp dirs, configs, batches. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { effectiveTopicConfig, type TopicConfig } from '../../../../src/broker/log/topic-config.ts';
import { CompressionCodec } from '../../../../src/protocol/compression.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';

export function tempDir(prefix = 'plog-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function topicConfig(overrides: Record<string, unknown> = {}): TopicConfig {
  return effectiveTopicConfig(overrides, {});
}

/** A producer-style batch (base offset 0) of `count` records `value-<n>` keyed `key-<n % keys>`. */
export function batchOf(
  count: number,
  options: {
    start?: number;
    timestamp?: number;
    codec?: CompressionCodec;
    keys?: number;
    valueBytes?: number;
  } = {},
): Buffer {
  const start = options.start ?? 0;
  return encodeBatch({
    codec: options.codec ?? CompressionCodec.none,
    records: Array.from({ length: count }, (_, i) => ({
      timestamp: options.timestamp ?? 1_000 + start + i,
      key: Buffer.from(`key-${(start + i) % (options.keys ?? 1_000_000)}`),
      value: Buffer.from(
        options.valueBytes
          ? `value-${start + i}-`.padEnd(options.valueBytes, 'x')
          : `value-${start + i}`,
      ),
    })),
  });
}
