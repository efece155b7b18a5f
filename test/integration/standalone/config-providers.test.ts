// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config references are written ${provider:path:key}
/**
 * Config references (`${file:path:key}`, Kafka's FileConfigProvider) through a
 * standalone worker: the task reads the resolved value, while the stored connector
 * config, the task configs and validation answers keep the reference; a reference
 * that cannot be resolved is refused naming its key.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { readRecords } from '../../helpers/read-records.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { rest, useStandalone, waitFor, workerConfig } from './standalone-helpers.ts';

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker();
});

afterAll(async () => {
  await broker?.stop();
});

const providerKeys = {
  'config.providers': 'file',
  'config.providers.file.class': 'org.apache.kafka.common.config.provider.FileConfigProvider',
};

describe('config providers in a standalone worker', () => {
  it('resolves a file reference for the task and keeps the reference everywhere it is shown', async () => {
    const dir = useTmpDir();
    const input = join(dir, 'input.txt');
    writeFileSync(input, 'one\ntwo\n');
    const secrets = join(dir, 'secrets.properties');
    writeFileSync(secrets, `input.file=${input}\n`);
    const reference = `\${file:${secrets}:input.file}`;
    const worker = await useStandalone(workerConfig(broker.bootstrap, dir, providerKeys));

    const created = await rest(worker, 'PUT', '/connectors/referenced/config', {
      'connector.class': 'FileStreamSource',
      'tasks.max': '1',
      file: reference,
      topic: 'referenced-lines',
    });

    expect(created.status).toBe(201);
    expect(
      (await readRecords(broker.bootstrap, 'referenced-lines', 2)).map((r) => r.value),
    ).toEqual(['one', 'two']);
    expect((await rest(worker, 'GET', '/connectors/referenced/config')).body.file).toBe(reference);
    const tasks = await waitFor('the task configs', async () => {
      const t = await rest(worker, 'GET', '/connectors/referenced/tasks');
      return t.body.length > 0 ? t.body : undefined;
    });
    expect(tasks[0].config.file).toBe(reference);
    const validated = await rest(
      worker,
      'PUT',
      '/connector-plugins/FileStreamSource/config/validate',
      {
        name: 'referenced',
        'connector.class': 'FileStreamSource',
        file: reference,
        topic: 'referenced-lines',
      },
    );
    expect(
      validated.body.configs.flatMap((c: { value: { errors: string[] } }) => c.value.errors),
    ).toEqual([]);
    expect(JSON.stringify(validated.body)).not.toContain(input);
  });

  it('refuses a reference it cannot resolve, naming the key, in validation and on create', async () => {
    const dir = useTmpDir();
    const secrets = join(dir, 'secrets.properties');
    writeFileSync(secrets, 'other=1\n');
    const worker = await useStandalone(workerConfig(broker.bootstrap, dir, providerKeys));
    const config = {
      name: 'unresolved',
      'connector.class': 'FileStreamSource',
      file: `\${file:${secrets}:input.file}`,
      topic: 'never',
    };

    const validated = await rest(
      worker,
      'PUT',
      '/connector-plugins/FileStreamSource/config/validate',
      config,
    );
    const created = await rest(worker, 'PUT', '/connectors/unresolved/config', config);

    expect(validated.body.error_count).toBe(1);
    const file = validated.body.configs.find(
      (c: { value: { name: string } }) => c.value.name === 'file',
    );
    expect(file.value.errors).toEqual([
      `file: cannot resolve \${file:${secrets}:input.file}: ${secrets} has no key 'input.file'`,
    ]);
    expect(created.status).toBe(400);
    expect(created.body.message).toContain(`${secrets} has no key 'input.file'`);
  });
});
