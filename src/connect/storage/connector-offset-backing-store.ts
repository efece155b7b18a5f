/**
 * The offset store one source connector (and its tasks) works with, Kafka Connect's
 * ConnectorOffsetBackingStore: its own offsets topic (`offsets.storage.topic`) as the
 * primary store with the worker's global store as the secondary, or either alone.
 *
 * Reads: the connector's topic first, the worker's store for keys it lacks, so a
 * connector that moves to its own topic resumes from the offsets it had committed to
 * the worker's topic. A tombstone in the connector's topic is "no value there", so the
 * worker's value would show through it: hence the write order below.
 *
 * Writes (`set`), as Kafka (KAFKA-15018) with both stores present:
 *   1. tombstones go to the worker's store first, awaited: a reset must not leave an
 *      old worker-store value that reads would fall back to;
 *   2. every entry goes to the connector's topic, awaited: this is the commit;
 *   3. the non-tombstone entries are copied to the worker's store, not awaited; a
 *      failure there is only logged (the worker store is a fallback, the primary
 *      already holds the offsets).
 * Exactly-once tasks write step 2 themselves, inside their transaction, and call
 * `writeWorkerTombstones` before it and `copyToWorker` after the commit (not when the
 * records are acknowledged, as Kafka does: an aborted transaction's offsets must not
 * reach the fallback).
 *
 * Lifecycle: the stores are started and stopped by their owners
 * (connector-offset-topics.ts leases the connector's; the worker owns its own), so
 * `start` and `stop` here do nothing.
 */
import type { Logger } from '../../util/logger.ts';
import type { OffsetBackingStore } from './offset-backing-store.ts';

export interface ConnectorOffsetStoreParts {
  /** The topic offsets are committed to: the connector's own, else the worker's. */
  primaryOffsetsTopic: string;
  /** The worker's global store; null when the connector's topic is the worker's topic. */
  workerStore: OffsetBackingStore | null;
  /** The store on the connector's own topic; null when it has none. */
  connectorStore: OffsetBackingStore | null;
  logger: Logger;
  /** Who the warnings are about (`connector gen`, `task gen-0`). */
  owner: string;
}

export class ConnectorOffsetBackingStore implements OffsetBackingStore {
  readonly primaryOffsetsTopic: string;
  private readonly primary: OffsetBackingStore;
  /** The worker's store when the connector's topic is the primary. */
  private readonly secondary: OffsetBackingStore | null;

  constructor(private readonly parts: ConnectorOffsetStoreParts) {
    const primary = parts.connectorStore ?? parts.workerStore;
    if (primary === null) throw new Error('ConnectorOffsetBackingStore: no store given');
    this.primary = primary;
    this.secondary = parts.connectorStore === null ? null : parts.workerStore;
    this.primaryOffsetsTopic = parts.primaryOffsetsTopic;
  }

  /** Whether offsets go to a topic of the connector's own (not the worker's). */
  get hasConnectorStore(): boolean {
    return this.parts.connectorStore !== null;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  async get(keys: readonly string[]): Promise<Map<string, string>> {
    if (this.secondary === null) return this.primary.get(keys);
    const [fallback, own] = await Promise.all([this.secondary.get(keys), this.primary.get(keys)]);
    for (const [k, v] of own) fallback.set(k, v);
    return fallback;
  }

  async entries(): Promise<Map<string, string>> {
    if (this.secondary === null) return this.primary.entries();
    const [fallback, own] = await Promise.all([this.secondary.entries(), this.primary.entries()]);
    for (const [k, v] of own) fallback.set(k, v);
    return fallback;
  }

  async set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    await this.writeWorkerTombstones(entries);
    await this.primary.set(entries);
    this.copyToWorker(entries);
  }

  /** Step 1 of `set`: the tombstones to the worker's store, awaited (nothing without one). */
  async writeWorkerTombstones(entries: ReadonlyMap<string, string | null>): Promise<void> {
    if (this.secondary === null) return;
    const tombstones = new Map<string, null>();
    for (const [k, v] of entries) if (v === null) tombstones.set(k, null);
    if (tombstones.size > 0) await this.secondary.set(tombstones);
  }

  /** Step 3 of `set`: the values to the worker's store, in the background; failures logged. */
  copyToWorker(entries: ReadonlyMap<string, string | null>): void {
    if (this.secondary === null) return;
    const values = new Map<string, string>();
    for (const [k, v] of entries) if (v !== null) values.set(k, v);
    if (values.size === 0) return;
    this.secondary.set(values).catch((e: unknown) => {
      this.parts.logger.warn(
        { err: e },
        `${this.parts.owner}: failed to write offsets to the worker's offsets topic (the secondary store); they are committed in ${this.primaryOffsetsTopic}`,
      );
    });
  }
}
