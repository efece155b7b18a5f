/**
 * Writes docs/connectors/*.md from the bundled plugins' config definitions
 * (scripts/connector-docs-content.ts). Run after changing a connector's keys:
 *
 *   npx tsx scripts/connector-docs.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectorDocs, docsDir } from './connector-docs-content.ts';

mkdirSync(docsDir, { recursive: true });
for (const [name, text] of await connectorDocs()) {
  const path = join(docsDir, name);
  let before = '';
  try {
    before = readFileSync(path, 'utf8');
  } catch {}
  if (before !== text) {
    writeFileSync(path, text);
    console.log(`docs/connectors/${name} updated`);
  }
}
