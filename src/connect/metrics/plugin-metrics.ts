/**
 * The runtime side of PluginMetrics (src/connect/api/plugin-metrics.ts, what a plugin
 * sees): every plugin metric family of one worker, and one handle per task whose
 * series carry the task's `connector` and `task` labels and go when the task stops.
 *
 * Families: a name is one family across all tasks of the worker: the first
 * registration fixes its type, help and label names; a later registration with
 * another type or other label names is refused (a plugin bug, thrown at once so it
 * shows in the task's start). Names under `kafka_connect_` belong to the runtime and
 * are refused too, as are the labels the runtime sets.
 *
 * Cost: `inc` and `set` write a number field; nothing is hashed or looked up. A
 * series given a `read` function is read at scrape time only.
 */

import type { Registry } from 'prom-client';
import type {
  PluginCounter,
  PluginGauge,
  PluginMetricOptions,
  PluginMetrics,
} from '../api/plugin-metrics.ts';
import { LABEL_NAME, type Labels, LazyMetric, METRIC_NAME, type Sample } from './lazy-metric.ts';

export type { PluginCounter, PluginGauge, PluginMetricOptions, PluginMetrics };

/** Labels the runtime sets on every plugin series. */
const RUNTIME_LABELS = new Set(['connector', 'task']);
const RESERVED_PREFIX = 'kafka_connect_';

/** An info series' label, whose value is read at scrape time. */
interface InfoLabel {
  name: string;
  read: () => string | null;
}

class Series {
  value = 0;
  constructor(
    readonly labels: Labels,
    readonly read: (() => number) | null,
    readonly info: InfoLabel | null = null,
  ) {}
}

interface Family {
  type: 'counter' | 'gauge';
  help: string;
  labelNames: string;
  series: Set<Series>;
}

/** Every plugin metric family of one worker (ConnectMetrics owns one). */
export class PluginMetricFamilies {
  private readonly families = new Map<string, Family>();

  constructor(private readonly registry: Registry) {}

  /** A handle for one task; `close()` removes its series. */
  forTask(connector: string, task: number): TaskPluginMetrics {
    return new TaskPluginMetrics(this, { connector, task: String(task) });
  }

  add(
    type: 'counter' | 'gauge',
    options: PluginMetricOptions,
    base: Labels,
    read: (() => number) | null,
    info: InfoLabel | null = null,
  ): Series {
    const { name, help } = options;
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    if (name.startsWith(RESERVED_PREFIX))
      throw new Error(`metric name ${name}: names under ${RESERVED_PREFIX} belong to the runtime`);
    const extra = options.labels ?? {};
    for (const key of Object.keys(extra)) {
      if (!LABEL_NAME.test(key) || key.startsWith('__'))
        throw new Error(`metric ${name}: invalid label name ${JSON.stringify(key)}`);
      if (RUNTIME_LABELS.has(key))
        throw new Error(`metric ${name}: label ${key} is set by the runtime`);
    }
    const names = Object.keys(extra);
    if (info !== null) {
      if (!LABEL_NAME.test(info.name) || info.name.startsWith('__') || names.includes(info.name))
        throw new Error(`metric ${name}: invalid info label ${JSON.stringify(info.name)}`);
      if (RUNTIME_LABELS.has(info.name))
        throw new Error(`metric ${name}: label ${info.name} is set by the runtime`);
      names.push(info.name);
    }
    const labelNames = names.sort().join(',');
    let family = this.families.get(name);
    if (family === undefined) {
      if (this.registry.getSingleMetric(name) !== undefined)
        throw new Error(`metric name ${name} is taken`);
      const created: Family = { type, help, labelNames, series: new Set() };
      family = created;
      this.families.set(name, created);
      LazyMetric.register(this.registry, { name, help, type }, () => collect(created));
    } else if (family.type !== type || family.labelNames !== labelNames) {
      throw new Error(
        `metric ${name} is a ${family.type} with labels [${family.labelNames}]; cannot add a ${type} with labels [${labelNames}]`,
      );
    }
    const series = new Series({ ...base, ...extra }, read, info);
    family.series.add(series);
    return series;
  }

  remove(name: string, series: Series): void {
    this.families.get(name)?.series.delete(series);
  }
}

function* collect(family: Family): Generator<Sample> {
  for (const s of family.series) {
    if (s.info !== null) {
      let text: string | null;
      try {
        text = s.info.read();
      } catch {
        continue;
      }
      if (text !== null) yield { labels: { ...s.labels, [s.info.name]: text }, value: 1 };
      continue;
    }
    let value = s.value;
    if (s.read !== null) {
      try {
        value = s.read();
      } catch {
        // A plugin's read that throws loses its sample, not the whole scrape.
        continue;
      }
    }
    yield { labels: s.labels, value };
  }
}

export class TaskPluginMetrics implements PluginMetrics {
  private readonly owned: Array<{ name: string; series: Series }> = [];
  private closed = false;

  constructor(
    private readonly families: PluginMetricFamilies,
    private readonly base: Labels,
  ) {}

  counter(options: PluginMetricOptions): PluginCounter {
    const series = this.add('counter', options, null);
    return {
      inc(by = 1) {
        if (by > 0) series.value += by;
      },
    };
  }

  gauge(options: PluginMetricOptions): PluginGauge {
    const series = this.add('gauge', options, null);
    return {
      set(value) {
        series.value = value;
      },
    };
  }

  counterOf(options: PluginMetricOptions, read: () => number): void {
    this.add('counter', options, read);
  }

  gaugeOf(options: PluginMetricOptions, read: () => number): void {
    this.add('gauge', options, read);
  }

  infoOf(options: PluginMetricOptions, label: string, read: () => string | null): void {
    this.add('gauge', options, null, { name: label, read });
  }

  /** Removes every series of the task (the worker calls it when the task stops). */
  close(): void {
    this.closed = true;
    for (const { name, series } of this.owned) this.families.remove(name, series);
    this.owned.length = 0;
  }

  private add(
    type: 'counter' | 'gauge',
    options: PluginMetricOptions,
    read: (() => number) | null,
    info: InfoLabel | null = null,
  ) {
    const series = this.families.add(type, options, this.base, read, info);
    // A task that registers after it was stopped gets a working handle that shows nothing.
    if (this.closed) this.families.remove(options.name, series);
    else this.owned.push({ name: options.name, series });
    return series;
  }
}
