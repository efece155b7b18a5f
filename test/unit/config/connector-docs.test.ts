import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectorDocs, docsDir } from '../../../scripts/connector-docs-content.ts';

describe('docs/connectors', () => {
  it('has one page per bundled plugin folder, each matching its config definitions', async () => {
    const pages = await connectorDocs();
    const stale = [...pages].filter(([name, text]) => {
      try {
        return readFileSync(join(docsDir, name), 'utf8') !== text;
      } catch {
        return true;
      }
    });
    if (stale.length > 0) {
      expect.fail(
        `docs/connectors is out of date (${stale.map(([n]) => n).join(', ')}): run \`npx tsx scripts/connector-docs.ts\` and commit docs/`,
      );
    }
    expect(readdirSync(docsDir).sort()).toEqual([...pages.keys()].sort());
  });
});
