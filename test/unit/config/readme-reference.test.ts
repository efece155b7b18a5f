import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { brokerConfigDefs } from '../../../src/config/broker-config.ts';
import { renderMarkdownReference, spliceReference } from '../../../src/config/config-reference.ts';
import { connectWorkerDefs } from '../../../src/config/worker-config.ts';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe('README.md configuration reference', () => {
  it('matches the config definitions', () => {
    const expected = spliceReference(readme, renderMarkdownReference());
    if (expected !== readme) {
      expect.fail(
        'README.md configuration reference is out of date with src/config: run `npx tsx scripts/config-reference.ts` and commit README.md',
      );
    }
  });

  it('lists every worker and broker key, and no machine-specific path', () => {
    for (const def of [...connectWorkerDefs, ...brokerConfigDefs]) {
      expect(readme).toContain(`| \`${def.name}\` `);
    }
    expect(renderMarkdownReference()).not.toContain(process.cwd());
  });
});
