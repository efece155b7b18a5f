/**
 * Renders config definitions for people: the key lists of `--help` and the Markdown
 * tables of README.md's configuration reference (written by scripts/config-reference.ts,
 * checked by a test). Both come from the same definitions the loader validates with,
 * so docs cannot drift from behaviour.
 */
import { brokerConfigDefs } from './broker-config.ts';
import type { AnyConfigDef } from './config-def.ts';
import { keyToEnvName } from './env-names.ts';
import { connectWorkerDefs } from './worker-config.ts';

/** How a default reads in docs: defaultDoc wins; Long.MAX_VALUE reads as "never". */
export function describeDefault(def: AnyConfigDef): string {
  if (def.defaultDoc !== undefined) return def.defaultDoc;
  const d = def.default;
  if (d === undefined) return 'required';
  if (d === null) return 'not set';
  if (d === Number.MAX_SAFE_INTEGER) return 'Long.MAX_VALUE (never)';
  if (Array.isArray(d)) return d.length === 0 ? 'empty' : d.join(',');
  if (d === '') return 'empty';
  return String(d);
}

export function groupsOf(defs: readonly AnyConfigDef[]): Map<string, AnyConfigDef[]> {
  const groups = new Map<string, AnyConfigDef[]>();
  for (const def of defs) {
    const name = def.group ?? 'Other';
    let list = groups.get(name);
    if (!list) {
      list = [];
      groups.set(name, list);
    }
    list.push(def);
  }
  return groups;
}

/** The key list printed after a command's --help, grouped, one key per entry. */
export function renderHelpKeys(defs: readonly AnyConfigDef[], envPrefix: string): string {
  const lines: string[] = [];
  for (const [group, list] of groupsOf(defs)) {
    lines.push('', `${group}:`);
    for (const def of list) {
      lines.push(`  ${def.name} (${def.type}, default: ${describeDefault(def)})`);
      lines.push(`      ${def.doc}  [${keyToEnvName(envPrefix, def.name)}]`);
    }
  }
  return lines.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/**
 * A Markdown table with columns padded to equal width, the layout biome's Markdown
 * formatter produces, so `npm run lint` accepts the generated files as they are.
 */
export function padTable(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The key table of a group of definitions; with `envPrefix`, their environment variables too. */
export function keyTable(defs: readonly AnyConfigDef[], envPrefix?: string): string {
  const header = [
    'Key',
    'Type',
    'Default',
    ...(envPrefix ? ['Environment variable'] : []),
    'Description',
  ];
  const rows = defs.map((def) => [
    `\`${def.name}\``,
    def.type,
    escapeCell(describeDefault(def)),
    ...(envPrefix ? [`\`${keyToEnvName(envPrefix, def.name)}\``] : []),
    escapeCell(def.doc),
  ]);
  return padTable(header, rows);
}

/** The whole reference section README.md carries between its markers. */
export function renderMarkdownReference(): string {
  const parts: string[] = [
    '<!-- Generated from src/config/*-config.ts by `npx tsx scripts/config-reference.ts`; do not edit by hand. -->',
    '',
    '### Worker (`connect worker`, `connect standalone`)',
    '',
    'Set in the worker .properties file, as `CONNECT_*` environment variables, or with `-o key=value`',
    '(later wins). Keys starting with `key.converter.`, `value.converter.`, `header.converter.` and',
    '`config.providers.` are passed to the plugins they name; `producer.` and `consumer.` keys go to',
    "the source tasks' producer and the sink tasks' consumer, each checked: a Kafka client key those",
    'clients do not implement is refused by name, as are `admin.`, `ssl.` and `sasl.` keys (the',
    'clients connect in PLAINTEXT only). The worker also accepts every broker key below, used when',
    'it runs the embedded broker.',
  ];
  for (const [group, list] of groupsOf(connectWorkerDefs)) {
    parts.push('', `#### ${group}`, '', keyTable(list, 'CONNECT_'));
  }
  parts.push(
    '',
    '### Broker (`connect broker`, and `connect worker` with the embedded broker)',
    '',
    'For `connect broker` the environment prefix is `BROKER_` (`BROKER_BROKER_PORT=9093`,',
    '`BROKER_LOG_RETENTION_MS=3600000`); in a worker it is `CONNECT_` like every worker key.',
  );
  for (const [group, list] of groupsOf(brokerConfigDefs)) {
    parts.push('', `#### ${group}`, '', keyTable(list, 'BROKER_'));
  }
  return parts.join('\n');
}

export const REFERENCE_START = '<!-- config-reference:start -->';
export const REFERENCE_END = '<!-- config-reference:end -->';

/** README text with the reference between the markers replaced; throws without markers. */
export function spliceReference(readme: string, reference: string): string {
  const start = readme.indexOf(REFERENCE_START);
  const end = readme.indexOf(REFERENCE_END);
  if (start < 0 || end < start) {
    throw new Error(`README.md has no ${REFERENCE_START} ... ${REFERENCE_END} section`);
  }
  return `${readme.slice(0, start + REFERENCE_START.length)}\n${reference}\n${readme.slice(end)}`;
}
