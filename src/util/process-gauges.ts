/**
 * The process metrics prom-client's default metrics name, read when scraped (no timers,
 * unlike collectDefaultMetrics): shared by the worker's and the broker's registries.
 */
const processStart = Date.now() / 1000 - process.uptime();

export interface ProcessGauge {
  readonly name: string;
  readonly type: 'counter' | 'gauge';
  readonly help: string;
  read(): number;
}

export const PROCESS_GAUGES: readonly ProcessGauge[] = [
  {
    name: 'process_cpu_user_seconds_total',
    type: 'counter',
    help: 'Total user CPU time spent in seconds.',
    read: () => process.cpuUsage().user / 1e6,
  },
  {
    name: 'process_cpu_system_seconds_total',
    type: 'counter',
    help: 'Total system CPU time spent in seconds.',
    read: () => process.cpuUsage().system / 1e6,
  },
  {
    name: 'process_resident_memory_bytes',
    type: 'gauge',
    help: 'Resident memory size in bytes.',
    read: () => process.memoryUsage.rss(),
  },
  {
    name: 'process_start_time_seconds',
    type: 'gauge',
    help: 'Start time of the process since unix epoch in seconds.',
    read: () => processStart,
  },
  {
    name: 'nodejs_heap_size_used_bytes',
    type: 'gauge',
    help: 'Process heap size used from Node.js in bytes.',
    read: () => process.memoryUsage().heapUsed,
  },
];
