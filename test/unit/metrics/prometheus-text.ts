/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: every
 * line must be a HELP, a TYPE or a sample of a family declared by a TYPE line before
 * it (histograms and summaries own their _bucket, _sum and _count); names and label
 * names must have Prometheus's syntax, label values its escapes; a series may appear
 * only once. Anything else throws, naming the line.
 */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedFamily {
  name: string;
  type: string;
  help: string;
  samples: ParsedSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const fail = (why: string): never => {
      throw new Error(`line ${i + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (m === null) {
        if (/^# (HELP|TYPE)/.test(line)) fail('bad HELP/TYPE line');
        return; // a comment
      }
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      const family = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) fail(`unknown type ${rest}`);
        if (family.samples.length > 0) fail('TYPE after samples');
        family.type = rest;
      } else {
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    const nameMatch = NAME.exec(line);
    if (nameMatch === null) fail('no metric name');
    const name = nameMatch![0];
    let pos = name.length;
    const labels: Record<string, string> = {};
    if (line[pos] === '{') {
      pos++;
      while (line[pos] !== '}') {
        const l = LABEL.exec(line.slice(pos));
        if (l === null) fail(`bad label name at ${pos}`);
        const key = l![0];
        pos += key.length;
        if (line.slice(pos, pos + 2) !== '="') fail(`expected =" at ${pos}`);
        pos += 2;
        let value = '';
        for (;;) {
          const c = line[pos];
          if (c === undefined) fail('unterminated label value');
          if (c === '"') break;
          if (c === '\\') {
            const e = line[pos + 1];
            if (e === 'n') value += '\n';
            else if (e === '\\' || e === '"') value += e;
            else fail(`bad escape \\${e}`);
            pos += 2;
            continue;
          }
          value += c;
          pos++;
        }
        pos++;
        if (key in labels) fail(`label ${key} twice`);
        labels[key] = value;
        if (line[pos] === ',') pos++;
        else if (line[pos] !== '}') fail(`expected , or } at ${pos}`);
      }
      pos++;
    }
    const rest = line.slice(pos);
    const v = /^ (\S+)( -?\d+)?$/.exec(rest);
    if (v === null) fail('bad value');
    const value = parseValue(v![1]!) ?? fail(`bad number ${v![1]}`);
    const family =
      families.get(name) ??
      families.get(name.replace(/_(bucket|sum|count)$/, '')) ??
      fail(`sample of ${name} without a TYPE`);
    if (family.name !== name && family.type !== 'histogram' && family.type !== 'summary')
      fail(`${name} is not a sample of ${family.name}`);
    if (name.endsWith('_bucket') && family.name !== name && labels.le === undefined)
      fail('bucket without le');
    const series = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(series)) fail('series repeated');
    seen.add(series);
    family.samples.push({ name, labels, value });
  });
  return families;
}

function parseValue(text: string): number | undefined {
  // Prometheus reads floats as Go's ParseFloat does: NaN in any case (prom-client writes Nan).
  if (/^nan$/i.test(text)) return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** The one sample of `family` whose labels include `labels`; throws if none or several. */
export function sampleOf(
  families: Map<string, ParsedFamily>,
  family: string,
  labels: Record<string, string> = {},
  name = family,
): number {
  const f = families.get(family);
  if (f === undefined) throw new Error(`no family ${family}`);
  const matching = f.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (matching.length !== 1)
    throw new Error(`${matching.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return matching[0]!.value;
}
