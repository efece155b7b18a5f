/**
 * The Prometheus text format (0.0.4) as GET /metrics serves it, parsed into samples:
 * `name{label="value",...} value [timestamp]` per line, `#` lines skipped. Label values
 * unescape \\, \" and \n. A line that does not parse is skipped rather than failing
 * the page: the page shows what it can read.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/y;

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels = m[2] === undefined ? {} : parseLabels(m[2]);
    if (labels === null) continue;
    samples.push({ name: m[1]!, labels, value: parseValue(m[3]!) });
  }
  return samples;
}

function parseLabels(text: string): Record<string, string> | null {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (m === null) return text.slice(at).trim() === '' ? labels : null;
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(text);
}

/** Sum of the samples named `name`, grouped by the value of `label` (e.g. connector). */
export function sumBy(
  samples: readonly Sample[],
  name: string,
  label: string,
): Map<string, number> {
  const sums = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name) continue;
    const key = s.labels[label];
    if (key === undefined || !Number.isFinite(s.value)) continue;
    sums.set(key, (sums.get(key) ?? 0) + s.value);
  }
  return sums;
}
