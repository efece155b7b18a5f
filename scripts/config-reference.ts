/**
 * Writes the configuration reference into README.md between its
 * `<!-- config-reference:start -->` and `<!-- config-reference:end -->` markers, from the
 * same definitions the CLI validates with. Run after changing a definition:
 *
 *   npx tsx scripts/config-reference.ts
 *
 * test/unit/config/readme-reference.test.ts fails while README.md is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderMarkdownReference, spliceReference } from '../src/config/config-reference.ts';

const readmePath = new URL('../README.md', import.meta.url);
const before = readFileSync(readmePath, 'utf8');
const after = spliceReference(before, renderMarkdownReference());
if (after === before) {
  console.log('README.md configuration reference is up to date');
} else {
  writeFileSync(readmePath, after);
  console.log('README.md configuration reference updated');
}
