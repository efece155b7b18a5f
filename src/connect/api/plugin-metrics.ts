/**
 * Metrics a task registers for itself (Kafka 4.0's KIP-877 PluginMetrics, in a
 * Prometheus shape): `context.pluginMetrics()` gives the handle; the task adds
 * counters and gauges under names of its own (Debezium's `debezium_metrics_*`, the
 * Parquet sink's files written), and the runtime labels every series with `connector`
 * and `task`, serves them on the worker's GET /metrics and removes them when the task
 * stops.
 *
 * Rules (checked at registration, thrown at once so a plugin bug shows in its start):
 * a name is one family across all tasks of the worker, so a second registration must
 * have the same type and label names; names under `kafka_connect_` belong to the
 * runtime, and the labels `connector` and `task` are the runtime's.
 *
 * Cost: `inc` and `set` write a number field, nothing is hashed or looked up, so they
 * may run per batch (per record if they must). The `...Of` forms are read only when
 * metrics are scraped: keep their `read` cheap and synchronous.
 */

export interface PluginCounter {
  /** Add `by` (default 1; a negative or zero `by` is ignored: counters only grow). */
  inc(by?: number): void;
}

export interface PluginGauge {
  set(value: number): void;
}

export interface PluginMetricOptions {
  /** Prometheus name, e.g. `debezium_metrics_totalnumberofeventsseen`. */
  name: string;
  help: string;
  /** Extra labels of this series (`connector` and `task` are added by the runtime). */
  labels?: Readonly<Record<string, string>>;
}

export interface PluginMetrics {
  counter(options: PluginMetricOptions): PluginCounter;
  gauge(options: PluginMetricOptions): PluginGauge;
  /** A counter whose total is read when metrics are scraped (a field the task keeps). */
  counterOf(options: PluginMetricOptions, read: () => number): void;
  /** A gauge whose value is read when metrics are scraped. */
  gaugeOf(options: PluginMetricOptions, read: () => number): void;
  /**
   * An info series (value 1) carrying a string as the label `label`, read when
   * metrics are scraped; no sample while `read` returns null. For string attributes
   * such as Debezium's LastTransactionId.
   */
  infoOf(options: PluginMetricOptions, label: string, read: () => string | null): void;
}

/** A handle that records nothing: for tasks run outside a worker (unit tests, tools). */
export const noopPluginMetrics: PluginMetrics = {
  counter: () => ({ inc: () => undefined }),
  gauge: () => ({ set: () => undefined }),
  counterOf: () => undefined,
  gaugeOf: () => undefined,
  infoOf: () => undefined,
};
