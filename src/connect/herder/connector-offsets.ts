/**
 * Reading, altering and resetting a connector's offsets (GET|PATCH|DELETE
 * /connectors/{name}/offsets, KIP-875), for both herders:
 *   - source connectors: the connector's offset store (its own offsets.storage.topic
 *     over the worker's, or the worker's alone: runtime/connector-offset-stores.ts),
 *     keys `["<connector>",{partition}]`, a null value removing an offset;
 *   - sink connectors: the consumer group `connect-<connector>`,
 *     `{kafka_topic, kafka_partition}` -> `{kafka_offset}` (sink-offset-format.ts); an
 *     alter commits from outside the group and deletes the offsets given as null, a
 *     reset deletes the group (src/protocol/client/group-offsets.ts).
 * Order, as in Kafka Connect's Worker.modifyConnectorOffsets: the request is validated
 * whole (400 for any bad entry), then the connector's own `alterOffsets` is asked (its
 * answer picks "framework-managed offsets only" when it does not manage them itself),
 * then the offsets are written.
 *
 * Invariant: no operation joins the sink's consumer group, so each leaves it with the
 * members it had, whether it succeeds or fails. A write the coordinator refuses because
 * the group still has members (a task that has not stopped yet) answers Kafka Connect's
 * "zombie sink tasks" message and may be retried.
 * The caller checks that the connector is STOPPED with no tasks before altering.
 */
import type { Admin } from 'kafkajs';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import {
  commitGroupOffsets,
  deleteGroup,
  deleteGroupOffsets,
  describePartitionError,
  type PartitionError,
} from '../../protocol/client/group-offsets.ts';
import { ErrorCode, errorByCode } from '../../protocol/error-codes.ts';
import type { SinkConnector, SourceConnector } from '../api/connector.ts';
import { ConnectException } from '../api/errors.ts';
import type { ConfigProviders } from '../runtime/config-providers.ts';
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
import { parseSinkOffsets, type SinkOffset } from './sink-offset-format.ts';
import { parseSourceOffsets } from './source-offset-format.ts';

export interface OffsetContext {
  plugins: PluginRegistry;
  offsetStore: OffsetBackingStore;
  /**
   * Runs `use` on a source connector's own offset store (the worker's ConnectorOffsetStores);
   * absent: `offsetStore` is every connector's store.
   */
  withSourceStore?: <T>(
    name: string,
    config: ConnectorConfigMap,
    use: (store: OffsetBackingStore) => Promise<T>,
  ) => Promise<T>;
  /** Reads a sink's committed offsets (OffsetFetch). */
  admin: () => Admin;
  /** Writes a sink's group offsets without joining the group. */
  cluster: () => ClusterClient;
  /** Resolves the config references the connector's alterOffsets must not see. */
  providers: ConfigProviders;
}

const sinkGroup = (name: string) => `connect-${name}`;

function withSourceStore<T>(
  ctx: OffsetContext,
  name: string,
  config: ConnectorConfigMap,
  use: (store: OffsetBackingStore) => Promise<T>,
): Promise<T> {
  return ctx.withSourceStore ? ctx.withSourceStore(name, config, use) : use(ctx.offsetStore);
}

/** Coordinator answers meaning the group still has members: a task has not stopped yet. */
const GROUP_IN_USE = new Set<number>([
  ErrorCode.UNKNOWN_MEMBER_ID,
  ErrorCode.ILLEGAL_GENERATION,
  ErrorCode.REBALANCE_IN_PROGRESS,
  ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
  ErrorCode.NON_EMPTY_GROUP,
]);

/** Kafka Connect's texts (Worker.alterSinkConnectorOffsets / resetSinkConnectorOffsets). */
export const offsetWriteMessages = {
  zombie: (name: string, what: 'alter' | 'reset') =>
    `Failed to ${what} consumer group offsets for connector ${name} either because its tasks haven't stopped completely yet or the connector was resumed before the request to ${what} its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.`,
  alterFailed: (name: string) => `Failed to alter consumer group offsets for connector ${name}`,
  resetFailed: (name: string) =>
    `Failed to reset consumer group offsets for sink connector ${name}`,
  listFailed: (name: string) =>
    `Failed to list offsets prior to resetting offsets for sink connector ${name}`,
  connectorFailed: (type: 'source' | 'sink', name: string) =>
    `Failed to modify offsets for ${type} connector ${name}`,
} as const;

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
  const list = await withSourceStore(ctx, name, config, (store) => connectorOffsets(name, store));
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
    const parsed = parseSinkOffsets(offsets);
    const connector = manifest.createConnector() as SinkConnector;
    handled = await askConnector('sink', name, () =>
      connector.alterOffsets?.(ctx.providers.resolve(config), parsed),
    );
    await writeSinkOffsets(ctx.cluster(), name, parsed);
  } else {
    const parsed = parseSourceOffsets(offsets);
    const connector = manifest.createConnector() as SourceConnector;
    handled = await askConnector('source', name, () =>
      connector.alterOffsets?.(ctx.providers.resolve(config), parsed),
    );
    const entries = new Map<string, string | null>();
    for (const { partition, offset } of parsed) {
      entries.set(offsetKey(name, partition), offset === null ? null : offsetValue(offset));
    }
    await withSourceStore(ctx, name, config, (store) => store.set(entries));
  }
  // "altered" even when every offset given is null: Kafka Connect's Worker says "reset"
  // only for DELETE (its offsets argument null), never for a PATCH.
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
    let current: Awaited<ReturnType<Admin['fetchOffsets']>>;
    try {
      current = await ctx.admin().fetchOffsets({ groupId: sinkGroup(name) });
    } catch (e) {
      throw new ConnectException(withCause(offsetWriteMessages.listFailed(name), e), { cause: e });
    }
    const parsed = current.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: null })),
    );
    const connector = manifest.createConnector() as SinkConnector;
    handled = await askConnector('sink', name, () =>
      connector.alterOffsets?.(ctx.providers.resolve(config), parsed),
    );
    let code: number;
    try {
      code = await deleteGroup(ctx.cluster(), sinkGroup(name));
    } catch (e) {
      throw new ConnectException(withCause(offsetWriteMessages.resetFailed(name), e), {
        cause: e,
      });
    }
    if (GROUP_IN_USE.has(code))
      throw new ConnectException(offsetWriteMessages.zombie(name, 'reset'));
    if (code !== 0) {
      const info = errorByCode(code);
      throw new ConnectException(
        `${offsetWriteMessages.resetFailed(name)}: ${info.name} (${info.message})`,
      );
    }
  } else {
    handled = await withSourceStore(ctx, name, config, async (store) => {
      const list = await connectorOffsets(name, store);
      const connector = manifest.createConnector() as SourceConnector;
      const answer = await askConnector('source', name, () =>
        connector.alterOffsets?.(
          ctx.providers.resolve(config),
          list.map((e) => ({ partition: e.partition, offset: null })),
        ),
      );
      const entries = new Map<string, string | null>();
      for (const key of (await store.entries()).keys()) {
        if (parseOffsetKey(key)?.connector === name) entries.set(key, null);
      }
      await store.set(entries);
      return answer;
    });
  }
  return { message: handled ? offsetsMessages.reset : offsetsMessages.resetFrameworkOnly };
}

/**
 * The connector's own alterOffsets (true: it adjusted its external state too). A throw
 * refuses the request; nothing has been written at that point.
 */
async function askConnector(
  type: 'source' | 'sink',
  name: string,
  alter: () => Promise<boolean> | boolean | undefined,
): Promise<boolean> {
  try {
    return (await alter()) ?? false;
  } catch (e) {
    throw new ConnectException(withCause(offsetWriteMessages.connectorFailed(type, name), e), {
      cause: e,
    });
  }
}

/** Commits the given offsets and deletes those given as null, from outside the group. */
async function writeSinkOffsets(
  client: ClusterClient,
  name: string,
  offsets: readonly SinkOffset[],
): Promise<void> {
  const group = sinkGroup(name);
  const refused: PartitionError[] = [];
  const commits = offsets.flatMap((o) => (o.offset === null ? [] : [{ ...o, offset: o.offset }]));
  const deletes = offsets.filter((o) => o.offset === null);
  try {
    refused.push(...(await commitGroupOffsets(client, group, commits)));
    refused.push(...(await deleteGroupOffsets(client, group, deletes)));
  } catch (e) {
    throw new ConnectException(withCause(offsetWriteMessages.alterFailed(name), e), { cause: e });
  }
  if (refused.some((e) => GROUP_IN_USE.has(e.code)))
    throw new ConnectException(offsetWriteMessages.zombie(name, 'alter'));
  if (refused.length > 0) {
    throw new ConnectException(
      `${offsetWriteMessages.alterFailed(name)}: ${refused.map(describePartitionError).join('; ')}`,
    );
  }
}

function withCause(message: string, cause: unknown): string {
  return `${message}: ${cause instanceof Error ? cause.message : String(cause)}`;
}
