/**
 * The `external` part of GET /connectors/{name}/status: what a connector keeps outside
 * Kafka (a replication slot and the WAL it retains), read through the plugin's
 * `externalState(config)` hook on a fresh, never started instance, so it answers on any
 * worker and for a STOPPED or FAILED connector too.
 *
 * Status is polled (tools refresh it every few seconds, tests every few milliseconds),
 * and each reading may open a database connection, so one reading per connector and
 * config serves every request for `cacheMs`, and requests that arrive while it runs
 * share it. A reading that throws or outlives `timeoutMs` is shown as
 * `{ "error": "..." }`: status itself never fails or hangs because of it.
 */
import { systemTimers, type Timers } from '../../util/timers.ts';
import type { Connector, ConnectorConfig } from '../api/connector.ts';
import { settlesWithin } from './plugin-deadlines.ts';
import type { PluginRegistry } from './plugins.ts';

export type ExternalState = Record<string, unknown>;

export interface ExternalStateOptions {
  /** How long one reading may take before it is shown as late. */
  timeoutMs: number;
  /** How long a reading serves later requests for the same connector and config. */
  cacheMs: number;
  /** Resolves the config's references (config-providers.ts) before the hook sees it. */
  resolve?: (config: ConnectorConfig) => ConnectorConfig;
  timers?: Timers;
  now?: () => number;
}

interface Reading {
  configKey: string;
  takenAt: number;
  value: Promise<ExternalState | undefined>;
}

export class ExternalStateReader {
  private readonly readings = new Map<string, Reading>();
  private readonly timers: Timers;
  private readonly now: () => number;

  constructor(
    private readonly plugins: PluginRegistry,
    private readonly o: ExternalStateOptions,
  ) {
    this.timers = o.timers ?? systemTimers;
    this.now = o.now ?? Date.now;
  }

  /** The connector's external state, or undefined when its plugin has no hook (or is missing). */
  read(name: string, config: ConnectorConfig): Promise<ExternalState | undefined> {
    const configKey = JSON.stringify(config);
    const cached = this.readings.get(name);
    if (cached && cached.configKey === configKey && this.now() - cached.takenAt < this.o.cacheMs)
      return cached.value;
    this.forgetOld();
    let connector: Connector | undefined;
    try {
      connector = this.connectorFor(config);
    } catch (e) {
      return Promise.resolve({ error: `could not create the connector: ${(e as Error).message}` });
    }
    if (connector?.externalState === undefined) return Promise.resolve(undefined);
    const value = this.take(connector, config);
    this.readings.set(name, { configKey, takenAt: this.now(), value });
    return value;
  }

  /** Expired readings go, so deleted connectors' readings do not pile up. */
  private forgetOld(): void {
    for (const [name, reading] of this.readings)
      if (this.now() - reading.takenAt >= this.o.cacheMs) this.readings.delete(name);
  }

  private connectorFor(config: ConnectorConfig): Connector | undefined {
    const cls = config['connector.class'];
    if (cls === undefined) return undefined;
    return this.plugins.findOfType(cls, 'source', 'sink')?.createConnector();
  }

  private async take(connector: Connector, config: ConnectorConfig): Promise<ExternalState> {
    const resolve = this.o.resolve ?? ((c: ConnectorConfig) => c);
    const work = Promise.resolve().then(() => connector.externalState?.(resolve(config)));
    let value: ExternalState | undefined;
    let failure: unknown;
    const watched = work.then(
      (v) => {
        value = v;
      },
      (e: unknown) => {
        failure = e;
      },
    );
    if (!(await settlesWithin(watched, this.o.timeoutMs, this.timers)))
      return { error: `no answer within ${this.o.timeoutMs} ms` };
    if (failure !== undefined)
      return { error: failure instanceof Error ? failure.message : String(failure) };
    return value ?? {};
  }
}
