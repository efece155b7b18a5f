/**
 * The status page behind REST Basic authentication (BasicAuthSecurityRestExtension): a
 * browser without the password gets 401 and the Basic challenge; with it (the
 * credentials a user types into the browser's prompt, given here as playwright's
 * httpCredentials) the page loads, its own API and the REST API answer, and the Pause
 * and Resume buttons work.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BASIC_AUTH_EXTENSION } from '../../../src/connect/rest/basic-auth.ts';
import { repositoryRoot } from '../../../src/util/code-layout.ts';
import { startTestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { useStandalone, waitFor, workerConfig } from '../standalone/standalone-helpers.ts';

const MODULE = 'org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule';
const artifacts = join(repositoryRoot, 'test-artifacts/ui');

describe('status page with REST Basic authentication', () => {
  it('asks for the password, and works with it', async () => {
    mkdirSync(artifacts, { recursive: true });
    const dir = useTmpDir('ui-auth-');
    writeFileSync(join(dir, 'connect.password'), 'alice=s3cret\n');
    writeFileSync(
      join(dir, 'jaas.conf'),
      `KafkaConnect {\n  ${MODULE} required file="${join(dir, 'connect.password')}";\n};\n`,
    );
    const launched = chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-background-networking'],
    });
    const broker = await startTestBroker();
    onTestFinished(() => broker.stop());
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, {
        'rest.extension.classes': BASIC_AUTH_EXTENSION,
        'java.security.auth.login.config': join(dir, 'jaas.conf'),
      }),
      [
        {
          name: 'gen',
          config: {
            'connector.class': 'connect.datagen.DatagenConnector',
            'kafka.topic': 'gen',
            'records.per.second': '20',
          },
        },
      ],
    );
    const browser = await launched;
    onTestFinished(() => browser.close());

    const stranger = await browser.newContext();
    // A page's navigation fails on the challenge without credentials to answer it
    // (net::ERR_INVALID_AUTH_CREDENTIALS); the context's own request shows the answer.
    const refused = await stranger.request.get(`${worker.restUrl}/ui/`);
    expect(refused.status()).toBe(401);
    expect(refused.headers()['www-authenticate']).toMatch(/^Basic /);
    await stranger.close();

    const context = await browser.newContext({
      httpCredentials: { username: 'alice', password: 's3cret' },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(`${worker.restUrl}/ui?refresh=300`);
      const gen = page.locator('[data-testid="connector"][data-name="gen"]');
      await gen.locator('[data-testid="connector-state"]', { hasText: 'RUNNING' }).waitFor();
      await gen.getByRole('button', { name: 'Pause', exact: true }).click();
      await waitFor('gen to be PAUSED', async () => {
        const r = await fetch(`${worker.restUrl}/connectors/gen/status`, {
          headers: { authorization: `Basic ${Buffer.from('alice:s3cret').toString('base64')}` },
        });
        return ((await r.json()) as { connector: { state: string } }).connector.state === 'PAUSED'
          ? true
          : undefined;
      });
      await gen.locator('[data-testid="connector-state"]', { hasText: 'PAUSED' }).waitFor();
      await gen.getByRole('button', { name: 'Resume', exact: true }).click();
      await gen.locator('[data-testid="connector-state"]', { hasText: 'RUNNING' }).waitFor();
    } finally {
      await page.screenshot({ path: join(artifacts, 'basic-auth.png'), fullPage: true });
      await context.close();
    }
    expect(errors).toEqual([]);
  });
});
