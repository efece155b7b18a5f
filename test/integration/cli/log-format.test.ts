/**
 * log.format and log.level through the command users run: readable lines with
 * log.format=pretty (as on a terminal), JSON lines with json (the default when stdout
 * is not a terminal, as here), and the broker's own thread logging the same way.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConnect } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

function broker(dir: string, ...options: string[]) {
  return useConnect([
    'broker',
    '-o',
    'broker.port=0',
    '-o',
    `broker.data.dir=${join(dir, 'data')}`,
    ...options.flatMap((o) => ['-o', o]),
  ]);
}

describe('log.format and log.level', () => {
  it('pretty: readable lines, from the broker thread too', async () => {
    const p = broker(useTmpDir(), 'log.format=pretty', 'log.level=info');
    await p.waitForLine('broker ready');
    const line = await p.waitForLine(/INFO: loaded the transaction log/);

    expect(line).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: loaded the transaction log$/);
    expect(p.output().some((l) => l.startsWith('{'))).toBe(false);
  });

  it('json (the default off a terminal): one JSON object per line, at the level asked', async () => {
    const info = broker(useTmpDir(), 'log.level=info');
    const warn = broker(useTmpDir(), 'log.level=warn');
    await info.waitForLine('broker ready');
    await warn.waitForLine('broker ready');
    const line = await info.waitForLine(/loaded the transaction log/);

    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'loaded the transaction log' });
    expect(warn.output().some((l) => l.includes('loaded the transaction log'))).toBe(false);
  });

  it('refuses a level it does not know, naming the key', async () => {
    const p = broker(useTmpDir(), 'log.level=verbose');
    const line = await p.waitForLine(/log\.level/);

    expect(line).toContain(
      '\'log.level\' (value "verbose"): must be one of trace, debug, info, warn, error, fatal',
    );
  });
});
