/**
 * Reading, altering and resetting a connector's offsets (GET|PATCH|DELETE
 * /connectors/{name}/offsets, KIP-875), for the distributed herder:
 *   - source connectors: the offset topic through the OffsetBackingStore, keys
 *     `["<connector>",{partition}]`, a null value removing an offset;
 *   - sink connectors: the consumer group `connect-<connector>` through the admin
 *     client, `{kafka_topic, kafka_partition}` -> `{kafka_offset}`; a reset deletes
 *     the group, a null offset moves the partition to its log start.
 * The connector's own `alterOffsets` is asked first; its answer picks Kafka Connect's
 * message ("framework-managed offsets only" when it does not manage them itself).
 * The caller checks that the connector is STOPPED with no tasks before altering.
 */
import type { Admin } from 'kafkajs';
import type { SinkConnector, SourceConnector } from '../api/connector.ts';
import { connectorOffsets } from '../runtime/connector-offset-reader.ts';
import { offsetKey, offsetValue, parseOffsetKey } from '../runtime/offset-keys.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import {
  type ConnectorConfigMap,
  type ConnectorOffset,
  type ConnectorOffsets,
  HerderError,
  type OffsetsMessage,
  offsetsMessages,
} from './herder.ts';

export interface OffsetContext {
  plugins: PluginRegistry;
  offsetStore: OffsetBackingStore;
  admin: () => Admin;
}

const sinkGroup = (name: string) => `connect-${name}`;

function manifestOf(ctx: OffsetContext, name: string, config: ConnectorConfigMap) {
  const manifest = ctx.plugins.findOfType(config['connector.class'] ?? '', 'source', 'sink');
  if (manifest === undefined)
    throw new HerderError('bad-request', `Connector ${name} has an unknown class`);
  return manifest;
}

export async function readConnectorOffsets(
  ctx: OffsetContext,
  name: string,
  config: ConnectorConfigMap,
): Promise<ConnectorOffsets> {
  if (manifestOf(ctx, name, config).type === 'sink') {
    const topics = await ctx.admin().fetchOffsets({ groupId: sinkGroup(name) });
    const offsets: ConnectorOffset[] = [];
    for (const t of topics) {
      for (const p of t.partitions) {
        if (Number(p.offset) < 0) continue;
        offsets.push({
          partition: { kafka_topic: t.topic, kafka_partition: p.partition },
          offset: { kafka_offset: Number(p.offset) },
        });
      }
    }
    return { offsets };
  }
  const list = await connectorOffsets(name, ctx.offsetStore);
  return {
    offsets: list.map(({ partition, offset }) => ({
      partition: { ...partition },
      offset: { ...offset },
    })),
  };
}

export async function alterConnectorOffsets(
  ctx: OffsetContext,
  name: string,
  config: ConnectorConfigMap,
  offsets: ConnectorOffset[],
): Promise<OffsetsMessage> {
  const manifest = manifestOf(ctx, name, config);
  let handled: boolean;
  if (manifest.type === 'sink') {
    const parsed = offsets.map(parseSinkOffset);
    const connector = manifest.createConnector() as SinkConnector;
    handled = (await connector.alterOffsets?.(config, parsed)) ?? false;
    await writeSinkOffsets(ctx.admin(), name, parsed);
  } else {
    const parsed = offsets.map((o) => ({
      partition: o.partition as never,
      offset: o.offset as never,
    }));
    const connector = manifest.createConnector() as SourceConnector;
    handled = (await connector.alterOffsets?.(config, parsed)) ?? false;
    const entries = new Map<string, string | null>();
    for (const { partition, offset } of parsed) {
      entries.set(offsetKey(name, partition), offset === null ? null : offsetValue(offset));
    }
    await ctx.offsetStore.set(entries);
  }
  if (offsets.every((o) => o.offset === null))
    return { message: handled ? offsetsMessages.reset : offsetsMessages.resetFrameworkOnly };
  return { message: handled ? offsetsMessages.altered : offsetsMessages.alteredFrameworkOnly };
}

export async function resetConnectorOffsets(
  ctx: OffsetContext,
  name: string,
  config: ConnectorConfigMap,
): Promise<OffsetsMessage> {
  const manifest = manifestOf(ctx, name, config);
  let handled: boolean;
  if (manifest.type === 'sink') {
    const admin = ctx.admin();
    const current = await admin.fetchOffsets({ groupId: sinkGroup(name) });
    const parsed = current.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: null })),
    );
    handled =
      (await (manifest.createConnector() as SinkConnector).alterOffsets?.(config, parsed)) ?? false;
    const { groups } = await admin.listGroups();
    if (groups.some((g) => g.groupId === sinkGroup(name)))
      await admin.deleteGroups([sinkGroup(name)]);
  } else {
    const list = await connectorOffsets(name, ctx.offsetStore);
    handled =
      (await (manifest.createConnector() as SourceConnector).alterOffsets?.(
        config,
        list.map((e) => ({ partition: e.partition, offset: null })),
      )) ?? false;
    const entries = new Map<string, string | null>();
    for (const key of (await ctx.offsetStore.entries()).keys()) {
      if (parseOffsetKey(key)?.connector === name) entries.set(key, null);
    }
    await ctx.offsetStore.set(entries);
  }
  return { message: handled ? offsetsMessages.reset : offsetsMessages.resetFrameworkOnly };
}

/** Consumer group offsets; a null offset moves the partition to its log start. */
async function writeSinkOffsets(
  admin: Admin,
  name: string,
  offsets: Array<{ topic: string; partition: number; offset: number | null }>,
): Promise<void> {
  const byTopic = new Map<string, Array<{ partition: number; offset: string }>>();
  for (const o of offsets) {
    let offset = o.offset;
    if (offset === null) {
      const low = (await admin.fetchTopicOffsets(o.topic)).find(
        (p) => p.partition === o.partition,
      )?.low;
      offset = Number(low ?? 0);
    }
    const list = byTopic.get(o.topic) ?? [];
    list.push({ partition: o.partition, offset: String(offset) });
    byTopic.set(o.topic, list);
  }
  for (const [topic, partitions] of byTopic) {
    await admin.setOffsets({ groupId: sinkGroup(name), topic, partitions });
  }
}

function parseSinkOffset(o: ConnectorOffset): {
  topic: string;
  partition: number;
  offset: number | null;
} {
  const topic = o.partition.kafka_topic;
  const partition = Number(o.partition.kafka_partition);
  const offset = o.offset === null ? null : Number(o.offset.kafka_offset);
  if (
    typeof topic !== 'string' ||
    !Number.isInteger(partition) ||
    (offset !== null && !Number.isInteger(offset))
  ) {
    throw new HerderError(
      'bad-request',
      'Sink connector offsets must have a partition with kafka_topic and kafka_partition and an offset with kafka_offset',
    );
  }
  return { topic, partition, offset };
}
