/**
 * The OffsetStorageReader handed to source connectors and tasks: reads one connector's
 * committed source offsets from its offset store (offset-keys.ts gives the key
 * layout): the worker's, or its own offsets.storage.topic over the worker's
 * (connector-offset-stores.ts). Safe to call at any time; it sees every completed
 * offset flush.
 */
import type { SourceOffset, SourcePartition } from '../api/connect-record.ts';
import type { OffsetStorageReader } from '../api/offset-storage-reader.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import { offsetKey, parseOffsetKey, parseOffsetValue } from './offset-keys.ts';

export class ConnectorOffsetReader implements OffsetStorageReader {
  constructor(
    private readonly connector: string,
    private readonly store: OffsetBackingStore,
  ) {}

  async offset(partition: SourcePartition): Promise<SourceOffset | null> {
    return (await this.offsets([partition])).get(partition) ?? null;
  }

  async offsets(
    partitions: readonly SourcePartition[],
  ): Promise<Map<SourcePartition, SourceOffset>> {
    const keys = partitions.map((p) => offsetKey(this.connector, p));
    const found = await this.store.get(keys);
    const result = new Map<SourcePartition, SourceOffset>();
    partitions.forEach((partition, i) => {
      const text = found.get(keys[i] as string);
      const offset = text === undefined ? undefined : parseOffsetValue(text);
      if (offset !== undefined) result.set(partition, offset);
    });
    return result;
  }
}

/** Every committed offset of one connector, for REST GET /connectors/{name}/offsets. */
export async function connectorOffsets(
  connector: string,
  store: OffsetBackingStore,
): Promise<Array<{ partition: SourcePartition; offset: SourceOffset }>> {
  const out: Array<{ partition: SourcePartition; offset: SourceOffset }> = [];
  for (const [key, value] of await store.entries()) {
    const parsed = parseOffsetKey(key);
    if (parsed === undefined || parsed.connector !== connector) continue;
    const offset = parseOffsetValue(value);
    if (offset !== undefined) out.push({ partition: parsed.partition, offset });
  }
  return out;
}
