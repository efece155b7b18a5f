/**
 * A metric family whose samples are made when Prometheus scrapes, from plain fields
 * the hot paths increment: what keeps metrics cheap when nobody scrapes.
 *
 * prom-client's own Counter and Gauge hash their label values on every inc() or set()
 * (and validate them); a sink task reading 100k records a second must not pay that
 * per batch, let alone per record. So every runtime metric here is a LazyMetric: the
 * objects the runtime updates (task-metrics.ts, worker-metrics.ts) hold numbers, and
 * `collect` turns them into samples at scrape time. A LazyMetric is registered in a
 * prom-client Registry, which formats it like its own metrics (escaping included).
 */
import type { Registry } from 'prom-client';

export type Labels = Readonly<Record<string, string | number>>;

export interface Sample {
  labels: Labels;
  value: number;
  /** A sample of another name in the family (histogram `_bucket`, `_sum`, `_count`). */
  metricName?: string;
}

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'untyped';

export interface MetricSpec {
  name: string;
  help: string;
  type: MetricType;
}

/** What prom-client's Registry reads from a metric: its name and `get()`. */
export class LazyMetric {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly aggregator = 'sum';

  constructor(
    spec: MetricSpec,
    private readonly collect: () => Iterable<Sample>,
  ) {
    this.name = spec.name;
    this.help = spec.help;
    this.type = spec.type;
  }

  /** Registered in `registry` (throws if the name is taken there). */
  static register(
    registry: Registry,
    spec: MetricSpec,
    collect: () => Iterable<Sample>,
  ): LazyMetric {
    const metric = new LazyMetric(spec, collect);
    // The Registry's type wants a prom-client Metric; it reads only name, help, type and get().
    registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
    return metric;
  }

  async get(): Promise<{
    name: string;
    help: string;
    type: MetricType;
    aggregator: string;
    values: Sample[];
  }> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.collect()],
    };
  }

  reset(): void {}
}

/** Prometheus's metric name syntax. */
export const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Prometheus's label name syntax (names starting with __ are reserved). */
export const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
