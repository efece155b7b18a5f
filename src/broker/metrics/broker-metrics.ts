/**
 * The broker's metrics, in the Prometheus text format, named as the Prometheus JMX
 * exporter's usual Kafka broker rules name Kafka's MBeans, so broker dashboards read
 * ours:
 *
 *   kafka_server_brokertopicmetrics_bytesin_total{topic}      BytesInPerSec (Count)
 *   kafka_server_brokertopicmetrics_messagesin_total{topic}   MessagesInPerSec
 *   kafka_server_brokertopicmetrics_bytesout_total{topic}     BytesOutPerSec
 *   kafka_server_brokertopicmetrics_messagesout_total{topic}  (ours: records fetched)
 *   kafka_network_requestmetrics_requests_total{request}      RequestsPerSec
 *   kafka_network_requestmetrics_totaltimems{request}         TotalTimeMs, a histogram
 *                                                             (ms, long-poll wait included)
 *   kafka_network_requestmetrics_remotetimems{request}        RemoteTimeMs, a histogram, for
 *                                                             Produce and Fetch: time in
 *                                                             purgatory (Fetch: the long poll's
 *                                                             wait; Produce: the wait for the
 *                                                             flush policy after the append;
 *                                                             0 for an answer at once)
 *   kafka_server_delayedoperationpurgatory_purgatorysize{delayedoperation}
 *                                                             PurgatorySize: Produce and Fetch
 *                                                             requests waiting now
 *   kafka_server_replicamanager_partitioncount                PartitionCount
 *   kafka_log_log_size{topic,partition}                       Log Size (bytes)
 *   kafka_log_log_numlogsegments / _logstartoffset / _logendoffset
 *   kafka_coordinator_group_groupmetadatamanager_numgroups[state]  NumGroups, NumGroups<State>
 *   kafka_server_socket_server_metrics_connection_count{listener}
 *   kafka_server_socket_server_metrics_failed_authentication_total{listener}
 *                                                             failed-authentication-total: SASL
 *                                                             attempts refused (the broker has
 *                                                             no SASL: a client configured for
 *                                                             it fails authentication here)
 *
 * Cost: the request path pays two performance.now() calls, an array index by api key
 * and a bucket scan (16 bounds) per request; produce and fetch add one Map lookup per
 * topic-partition in the request and, for fetch, a walk over the batch headers
 * returned; a produce with acks and a fetch that waits add two more performance.now()
 * calls and a bucket scan for their purgatory time. Everything else (sizes, groups, connections) is read from the broker's
 * own state when Prometheus scrapes. Nothing here runs when nobody scrapes but those
 * increments.
 *
 * One instance per broker, on the broker's thread; `text()` is what a scrape returns
 * (broker-thread.ts carries it to the worker's /metrics when the broker is embedded).
 */

import { Registry } from 'prom-client';
import { ApiKey } from '../../protocol/api-keys.ts';
import type { Message } from '../../protocol/codec.ts';
import { batchRecordCount, batchSize, RECORDS } from '../../protocol/record-batch.ts';
import { PROCESS_GAUGES } from '../../util/process-gauges.ts';
import type { GroupCoordinator } from '../group/group-coordinator.ts';
import type { LogManager } from '../log/log-manager.ts';
import type { FrameAnswer, FrameHandler } from '../server/socket-server.ts';

/** Request latency bucket bounds in ms: from a cached metadata answer to a long poll. */
export const REQUEST_TIME_BUCKETS_MS = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
] as const;

/** Per-topic traffic, incremented by the produce and fetch handlers. */
export class TopicTraffic {
  bytesIn = 0;
  messagesIn = 0;
  bytesOut = 0;
  messagesOut = 0;
}

/** The two purgatories a request can wait in, as Kafka's delayedOperation label names them. */
export type DelayedOperation = 'Produce' | 'Fetch';

/** What the produce and fetch handlers record (BrokerServices.metrics). */
export interface TopicTrafficMetrics {
  topic(name: string): TopicTraffic;
  /** A request starts waiting in its purgatory (PurgatorySize goes up). */
  purgatoryEntered?(operation: DelayedOperation): void;
  /** A request's wait ended (PurgatorySize goes down). */
  purgatoryLeft?(operation: DelayedOperation): void;
  /** A request answered after `ms` in its purgatory (0: answered at once): RemoteTimeMs. */
  recordRemoteTime?(operation: DelayedOperation, ms: number): void;
  /** A client's authentication was refused (sasl-handshake.ts). */
  authenticationFailed?(): void;
}

class RequestStats {
  count = 0;
  sum = 0;
  /** Non-cumulative counts per bucket; the last is +Inf. */
  readonly buckets = new Float64Array(REQUEST_TIME_BUCKETS_MS.length + 1);

  observe(ms: number): void {
    this.count++;
    this.sum += ms;
    let i = 0;
    while (i < REQUEST_TIME_BUCKETS_MS.length && ms > REQUEST_TIME_BUCKETS_MS[i]!) i++;
    this.buckets[i]!++;
  }
}

/** What the broker reads its gauges from, at scrape time. */
export interface BrokerState {
  logs: LogManager;
  coordinator: GroupCoordinator;
  connectionCount(): number;
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

type MetricType = 'counter' | 'gauge' | 'histogram';

const API_NAMES: string[] = [];
for (const [name, key] of Object.entries(ApiKey)) API_NAMES[key] = name;

const GROUP_STATES = ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'];

export interface BrokerMetricsOptions {
  /** process_* and nodejs_* gauges: off when the broker shares a process with a worker. */
  processMetrics?: boolean;
}

export class BrokerMetrics implements TopicTrafficMetrics {
  readonly registry = new Registry();
  private readonly traffic = new Map<string, TopicTraffic>();
  private readonly requests: Array<RequestStats | undefined> = [];
  private readonly remoteTime = { Produce: new RequestStats(), Fetch: new RequestStats() };
  private readonly purgatorySize = { Produce: 0, Fetch: 0 };
  private failedAuthentications = 0;
  private state: BrokerState | null = null;

  constructor(options: BrokerMetricsOptions = {}) {
    this.registerTraffic();
    this.registerRequests();
    this.registerState();
    if (options.processMetrics !== false) this.registerProcess();
  }

  /** Where gauges read from, once the broker's parts exist. */
  attach(state: BrokerState): void {
    this.state = state;
  }

  topic(name: string): TopicTraffic {
    let t = this.traffic.get(name);
    if (t === undefined) {
      t = new TopicTraffic();
      this.traffic.set(name, t);
    }
    return t;
  }

  purgatoryEntered(operation: DelayedOperation): void {
    this.purgatorySize[operation]++;
  }

  purgatoryLeft(operation: DelayedOperation): void {
    this.purgatorySize[operation]--;
  }

  recordRemoteTime(operation: DelayedOperation, ms: number): void {
    this.remoteTime[operation].observe(ms);
  }

  authenticationFailed(): void {
    this.failedAuthentications++;
  }

  /** `handler` with each request counted and timed by api. */
  instrument(handler: FrameHandler): FrameHandler {
    return (lent, connection, release) => {
      const apiKey = lent.length >= 2 ? lent.readInt16BE(0) : -1;
      const stats = apiKey >= 0 && apiKey < 256 ? this.requestStats(apiKey) : undefined;
      const start = performance.now();
      const answer = handler(lent, connection, release);
      if (stats === undefined) return answer;
      if (answer instanceof Promise) {
        return answer.then((a: FrameAnswer) => {
          stats.observe(performance.now() - start);
          return a;
        });
      }
      stats.observe(performance.now() - start);
      return answer;
    };
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  private requestStats(apiKey: number): RequestStats {
    let s = this.requests[apiKey];
    if (s === undefined) {
      s = new RequestStats();
      this.requests[apiKey] = s;
    }
    return s;
  }

  private family(name: string, type: MetricType, help: string, collect: () => Iterable<Sample>) {
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: [...collect()] }),
      reset: () => {},
    };
    // The Registry's type wants a prom-client Metric; it reads only name and get().
    this.registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  private registerTraffic(): void {
    const perTopic = (read: (t: TopicTraffic) => number) => () => {
      const out: Sample[] = [];
      const logs = this.state?.logs;
      for (const [topic, t] of this.traffic) {
        // A deleted topic's series go, as Kafka removes its BrokerTopicMetrics.
        if (logs !== undefined && logs.topic(topic) === undefined) {
          this.traffic.delete(topic);
          continue;
        }
        out.push({ labels: { topic }, value: read(t) });
      }
      return out;
    };
    const p = 'kafka_server_brokertopicmetrics_';
    this.family(
      `${p}bytesin_total`,
      'counter',
      'Bytes of record batches appended, by topic.',
      perTopic((t) => t.bytesIn),
    );
    this.family(
      `${p}messagesin_total`,
      'counter',
      'Records appended, by topic.',
      perTopic((t) => t.messagesIn),
    );
    this.family(
      `${p}bytesout_total`,
      'counter',
      'Bytes of record batches answered to fetches, by topic.',
      perTopic((t) => t.bytesOut),
    );
    this.family(
      `${p}messagesout_total`,
      'counter',
      'Records answered to fetches, by topic.',
      perTopic((t) => t.messagesOut),
    );
  }

  private registerRequests(): void {
    const each = (make: (request: string, s: RequestStats) => Sample[]) => () => {
      const out: Sample[] = [];
      this.requests.forEach((s, key) => {
        if (s !== undefined) out.push(...make(API_NAMES[key] ?? `api${key}`, s));
      });
      return out;
    };
    this.family(
      'kafka_network_requestmetrics_requests_total',
      'counter',
      'Requests answered, by api.',
      each((request, s) => [{ labels: { request }, value: s.count }]),
    );
    const name = 'kafka_network_requestmetrics_totaltimems';
    this.family(
      name,
      'histogram',
      'Time from a request read to its answer, in ms, by api (a long poll counts its wait).',
      each((request, s) => histogramSamples(name, request, s)),
    );
    const remote = 'kafka_network_requestmetrics_remotetimems';
    this.family(
      remote,
      'histogram',
      'Time a Produce or Fetch waited in purgatory, in ms (Fetch: the long poll; Produce: the flush policy).',
      () => {
        const out: Sample[] = [];
        for (const request of ['Produce', 'Fetch'] as const) {
          const s = this.remoteTime[request];
          if (s.count > 0) out.push(...histogramSamples(remote, request, s));
        }
        return out;
      },
    );
    this.family(
      'kafka_server_delayedoperationpurgatory_purgatorysize',
      'gauge',
      'Produce and Fetch requests waiting in purgatory now.',
      () =>
        (['Produce', 'Fetch'] as const).map((delayedoperation) => ({
          labels: { delayedoperation },
          value: this.purgatorySize[delayedoperation],
        })),
    );
  }

  private registerState(): void {
    const logs = () => {
      const logs = this.state?.logs;
      if (logs === undefined) return [];
      const out = [];
      for (const t of logs.topics()) {
        for (let partition = 0; partition < t.partitions; partition++) {
          out.push({ topic: t.name, partition, log: logs.getLog(t.name, partition) });
        }
      }
      return out;
    };
    const perLog = (read: (l: ReturnType<typeof logs>[number]['log']) => number) => () =>
      logs().map((l) => ({
        labels: { topic: l.topic, partition: l.partition },
        value: read(l.log),
      }));
    this.family(
      'kafka_server_replicamanager_partitioncount',
      'gauge',
      'Partitions on this broker.',
      () => [{ labels: {}, value: logs().length }],
    );
    this.family(
      'kafka_log_log_size',
      'gauge',
      'Bytes of the partition log on disk.',
      perLog((l) => l.size),
    );
    this.family(
      'kafka_log_log_numlogsegments',
      'gauge',
      'Segments of the partition log.',
      perLog((l) => l.segments.length),
    );
    this.family(
      'kafka_log_log_logstartoffset',
      'gauge',
      'First offset of the partition log.',
      perLog((l) => l.logStartOffset),
    );
    this.family(
      'kafka_log_log_logendoffset',
      'gauge',
      'Offset after the last record of the partition log.',
      perLog((l) => l.logEndOffset),
    );
    const groups = () => this.state?.coordinator.listGroups() ?? [];
    const g = 'kafka_coordinator_group_groupmetadatamanager_numgroups';
    this.family(g, 'gauge', 'Consumer groups on this coordinator.', () => [
      { labels: {}, value: groups().length },
    ]);
    for (const state of GROUP_STATES) {
      this.family(
        `${g}${state.toLowerCase()}`,
        'gauge',
        `Consumer groups in state ${state}.`,
        () => [{ labels: {}, value: groups().filter((x) => x.state === state).length }],
      );
    }
    this.family(
      'kafka_server_socket_server_metrics_connection_count',
      'gauge',
      'Open client connections.',
      () => [{ labels: { listener: 'PLAINTEXT' }, value: this.state?.connectionCount() ?? 0 }],
    );
    this.family(
      'kafka_server_socket_server_metrics_failed_authentication_total',
      'counter',
      'Client authentications refused: SASL handshakes, as this broker has no SASL.',
      () => [{ labels: { listener: 'PLAINTEXT' }, value: this.failedAuthentications }],
    );
  }

  private registerProcess(): void {
    for (const g of PROCESS_GAUGES)
      this.family(g.name, g.type, g.help, () => [{ labels: {}, value: g.read() }]);
  }
}

/** A histogram's cumulative _bucket, _sum and _count samples for one request label. */
function histogramSamples(name: string, request: string, s: RequestStats): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  REQUEST_TIME_BUCKETS_MS.forEach((le, i) => {
    cumulative += s.buckets[i]!;
    out.push({ metricName: `${name}_bucket`, labels: { request, le }, value: cumulative });
  });
  out.push({ metricName: `${name}_bucket`, labels: { request, le: '+Inf' }, value: s.count });
  out.push({ metricName: `${name}_sum`, labels: { request }, value: s.sum });
  out.push({ metricName: `${name}_count`, labels: { request }, value: s.count });
  return out;
}

/** Records and bytes of a produce's batches, once validated (produce.ts). */
export function countBatches(records: Buffer): number {
  let n = 0;
  let pos = 0;
  while (pos + RECORDS <= records.length) {
    n += batchRecordCount(records, pos);
    pos += batchSize(records, pos);
  }
  return n;
}

/** A fetch answer's records and bytes, by topic (fetch.ts, on the pass it answers). */
export function recordFetched(metrics: TopicTrafficMetrics, responses: readonly Message[]): void {
  for (const t of responses) {
    let traffic: TopicTraffic | undefined;
    for (const p of t.partitions as Message[]) {
      const records = p.records as Buffer;
      if (records.length === 0) continue;
      traffic ??= metrics.topic(t.topic as string);
      traffic.bytesOut += records.length;
      traffic.messagesOut += countBatches(records);
    }
  }
}
