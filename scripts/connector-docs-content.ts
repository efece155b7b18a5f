/**
 * The pages of docs/connectors/: one per bundled plugin folder (connectors/<name>), each
 * listing every plugin the folder registers with its names and every key it defines
 * (type, default, meaning), from the same definitions REST validate and the workers
 * check, plus docs/connectors/README.md with the keys every connector takes. Written by
 * scripts/connector-docs.ts; test/unit/config/connector-docs.test.ts fails while a page
 * is out of date.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UNSUPPORTED_KEYS } from '../connectors/postgres-cdc/src/unsupported-keys.ts';
import { groupsOf, keyTable } from '../src/config/config-reference.ts';
import type { PluginManifest } from '../src/connect/api/plugin-manifest.ts';
import {
  commonConnectorDefs,
  sinkOnlyDefs,
  sourceOnlyDefs,
} from '../src/connect/runtime/connector-config.ts';
import { PluginRegistry } from '../src/connect/runtime/plugins.ts';

export const connectorsDir = fileURLToPath(new URL('../connectors', import.meta.url));
export const docsDir = fileURLToPath(new URL('../docs/connectors', import.meta.url));

const GENERATED =
  "<!-- Generated from the plugins' config definitions by `npx tsx scripts/connector-docs.ts`; do not edit by hand. -->";

/** Notes a page carries beyond its keys, by plugin folder. */
const extras: Record<string, () => string[]> = {
  'postgres-cdc': () => [
    '## Debezium keys this connector refuses',
    '',
    'Accepted by Debezium, not implemented here: `/config/validate` and create refuse each with',
    '"not supported: <key>" and what to do instead, rather than ignore it.',
    '',
    ...UNSUPPORTED_KEYS.map((k) => `- \`${k}\``),
  ],
};

function groupedTables(defs: readonly PluginManifest['configDefs'][number][]): string[] {
  const out: string[] = [];
  for (const [group, list] of groupsOf(defs)) out.push('', `### ${group}`, '', keyTable(list));
  return out;
}

/** A doc line as a sentence, ending with a full stop. */
function sentence(text: string): string {
  const t = text.trim();
  return t === '' || /[.!?]$/.test(t) ? t : `${t}.`;
}

function pluginSection(m: PluginManifest): string[] {
  const names = m.aliases?.length
    ? ` Also answers to ${m.aliases.map((a) => `\`${a}\``).join(', ')}.`
    : '';
  return [
    `## \`${m.className}\` (${m.type}, ${m.version})`,
    '',
    `${sentence(m.doc ?? '')}${names}`.trim(),
    ...(m.configDefs.length === 0 ? ['', 'No keys of its own.'] : groupedTables(m.configDefs)),
  ];
}

/** The page of one plugin folder. */
export function pluginPage(folder: string, manifests: readonly PluginManifest[]): string {
  const lines = [
    GENERATED,
    '',
    `# connectors/${folder}`,
    '',
    'Keys of the plugins in this folder. The keys every connector takes (`name`,',
    '`connector.class`, `tasks.max`, converters, transforms, error handling, topic creation)',
    'are in [README.md](README.md).',
  ];
  for (const m of manifests) lines.push('', ...pluginSection(m));
  const extra = extras[folder];
  if (extra) lines.push('', ...extra());
  return `${lines.join('\n')}\n`;
}

/** docs/connectors/README.md: the index and the keys every connector takes. */
export function indexPage(folders: readonly string[]): string {
  const common = commonConnectorDefs(new PluginRegistry());
  const lines = [
    GENERATED,
    '',
    '# Connectors',
    '',
    ...folders.map((f) => `- [connectors/${f}](${f}.md)`),
    '',
    '## Keys every connector takes',
    ...groupedTables(common),
    '',
    '## Sink connectors also take',
    ...groupedTables(sinkOnlyDefs),
    '',
    '## Source connectors also take',
    ...groupedTables(sourceOnlyDefs),
  ];
  return `${lines.join('\n')}\n`;
}

/** Every page, by file name under docs/connectors/. */
export async function connectorDocs(): Promise<Map<string, string>> {
  const folders = readdirSync(connectorsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const pages = new Map<string, string>();
  for (const folder of folders) {
    const entry = pathToFileURL(join(connectorsDir, folder, 'index.ts')).href;
    const manifests = (await import(entry)).default as PluginManifest[];
    pages.set(`${folder}.md`, pluginPage(folder, manifests));
  }
  pages.set('README.md', indexPage(folders));
  return pages;
}
