/**
 * CPU time from Linux's /proc, for the benchmarks that split a run's CPU by process
 * and thread (bench/cdc, bench/parquet-sink).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** USER_HZ, the unit of /proc stat times (100 on Linux). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim() || 100);

/**
 * utime + stime of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat file, in ms: the
 * 14th and 15th fields, the 12th and 13th after the parenthesised command name.
 */
export function statCpuMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
