import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readConnectorFile } from '../../../src/config/connector-file.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

const examples = fileURLToPath(new URL('../../../config/connectors', import.meta.url));

describe('connector config files', () => {
  it.each(readdirSync(examples))('the example %s has a name and a connector.class', (file) => {
    const result = readConnectorFile(join(examples, file));
    expect(result).toMatchObject({ ok: true, file: { name: file.replace(/\.json$/, '') } });
  });

  it('reads the POST /connectors body, a flat JSON object and .properties alike', () => {
    const dir = useTmpDir();
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const expected = { name: 'c', config: { name: 'c', 'connector.class': 'X', 'tasks.max': '2' } };
    expect(
      readConnectorFile(
        write('a.json', '{"name":"c","config":{"connector.class":"X","tasks.max":2}}'),
      ),
    ).toMatchObject({ ok: true, file: expected });
    expect(
      readConnectorFile(write('b.json', '{"name":"c","connector.class":"X","tasks.max":"2"}')),
    ).toMatchObject({ ok: true, file: expected });
    expect(
      readConnectorFile(write('c.properties', 'name=c\nconnector.class=X\ntasks.max=2\n')),
    ).toMatchObject({ ok: true, file: expected });
  });

  it('says which file lacks what', () => {
    const dir = useTmpDir();
    writeFileSync(join(dir, 'x.json'), '{"name":"c","config":{}}');
    writeFileSync(join(dir, 'y.json'), '{not json');
    expect(readConnectorFile(join(dir, 'x.json'))).toEqual({
      ok: false,
      error: `${join(dir, 'x.json')}: connector c has no "connector.class"`,
    });
    expect(readConnectorFile(join(dir, 'y.json'))).toMatchObject({
      ok: false,
      error: expect.stringContaining('not valid JSON'),
    });
  });
});
