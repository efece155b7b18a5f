/**
 * The status page in a real browser: Debian's Chromium, driven by playwright-core
 * (which downloads no browser; test/global-setup.ts installs chromium with apt-get when
 * it is missing), against one standalone worker with an embedded broker running a
 * cheap pipeline: datagen -> topic gen -> file sink, and a file source whose line is
 * not JSON read by a sink with the JSON converter, so that sink's task is FAILED.
 * One worker and one browser for the whole file; each test opens a page. What the page
 * shows is checked against what the REST API says. Screenshots go to
 * test-artifacts/ui/ (git-ignored), kept whether the test passes or not.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type StandaloneWorker,
  startStandaloneWorker,
} from '../../../src/connect/runtime/standalone-worker.ts';
import { repositoryRoot } from '../../../src/util/code-layout.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { createTmpDir, type TmpDir } from '../../helpers/tmp-dir.ts';
import { rest, waitFor, workerConfig } from '../standalone/standalone-helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const artifacts = join(repositoryRoot, 'test-artifacts/ui');

let broker: TestBroker;
let tmp: TmpDir;
let worker: StandaloneWorker;
let browser: Browser;
let page: Page;
/** Uncaught errors of the page's script, checked after each test. */
const pageErrors: string[] = [];
let loads = 0;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  tmp = createTmpDir('ui-page-');
  const notJson = join(tmp.path, 'raw.txt');
  writeFileSync(notJson, 'not json\n');
  // The browser starts while the broker and worker do: both take a second or two.
  const launched = chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-background-networking'],
  });
  broker = await startTestBroker();
  worker = await startStandaloneWorker({
    config: workerConfig(broker.bootstrap, tmp.path),
    connectors: [
      {
        name: 'gen',
        config: {
          'connector.class': 'connect.datagen.DatagenConnector',
          'kafka.topic': 'gen',
          'records.per.second': '20',
        },
      },
      {
        name: 'gen-sink',
        config: {
          'connector.class': 'FileStreamSink',
          topics: 'gen',
          file: join(tmp.path, 'gen.txt'),
        },
      },
      {
        name: 'raw-src',
        config: { 'connector.class': 'FileStreamSource', file: notJson, topic: 'raw' },
      },
      {
        name: 'broken',
        config: {
          'connector.class': 'FileStreamSink',
          topics: 'raw',
          file: join(tmp.path, 'broken.txt'),
          'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
          'value.converter.schemas.enable': 'false',
        },
      },
    ],
  });
  for (const c of worker.created) if (c.error) throw c.error;
  browser = await launched;
  // One page for the file (a new page costs a second or two on a busy machine).
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await broker?.stop();
  tmp?.remove();
});

afterEach(async (context) => {
  const name = context.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80);
  await page?.screenshot({ path: join(artifacts, `${name}.png`) });
  expect(pageErrors.splice(0)).toEqual([]);
});

/**
 * Loads the worker's /ui afresh on `tab`, refreshing every 300 ms (the page's
 * ?refresh); `load` differs each time, so the browser loads the page anew rather than
 * only moving to another #tab of the one it shows.
 */
async function open(tab = 'connectors'): Promise<Page> {
  await page.goto(`${worker.restUrl}/ui?refresh=300&load=${++loads}#${tab}`);
  expect(new URL(page.url()).pathname).toBe('/ui/');
  return page;
}

const card = (p: Page, name: string) => p.locator(`[data-testid="connector"][data-name="${name}"]`);

async function connectorState(name: string): Promise<string> {
  const status = await rest(worker, 'GET', `/connectors/${name}/status`);
  return status.body.connector.state;
}

describe('the status page at /ui', () => {
  it("loads and shows the pipeline's connectors, where they run, and record counts and charts that move", async () => {
    const p = await open();
    await card(p, 'gen')
      .locator('[data-testid="connector-state"]', { hasText: 'RUNNING' })
      .waitFor();
    await expect(
      card(p, 'gen-sink').locator('[data-testid="connector-state"]').textContent(),
    ).resolves.toBe('RUNNING');
    const records = card(p, 'gen').locator('[data-testid="records"]');
    const count = async () => Number((await records.textContent())?.replaceAll(',', ''));
    const first = await waitFor('gen to count records', async () => {
      const n = await count();
      return n > 0 ? n : undefined;
    });
    const later = await waitFor('the count to move', async () => {
      const n = await count();
      return n > first ? n : undefined;
    });
    expect(later).toBeGreaterThan(first);

    await p.getByRole('button', { name: 'Cluster' }).click();
    const placed = p.locator('[data-testid="worker"]');
    await placed.first().waitFor();
    await expect(placed.first().textContent()).resolves.toContain('gen-sink');

    // Flow charts the rate computed from successive /metrics scrapes.
    await p.getByRole('button', { name: 'Flow' }).click();
    await p.locator('[data-testid="flow"][data-name="gen"] .chart-line').first().waitFor();
  });

  it('pauses and resumes a connector through its buttons', async () => {
    const p = await open();
    const gen = card(p, 'gen');
    await gen.locator('[data-testid="connector-state"]', { hasText: 'RUNNING' }).waitFor();
    await gen.getByRole('button', { name: 'Pause', exact: true }).click();
    await waitFor('gen to be PAUSED', async () =>
      (await connectorState('gen')) === 'PAUSED' ? true : undefined,
    );
    await gen.locator('[data-testid="connector-state"]', { hasText: 'PAUSED' }).waitFor();
    await gen.getByRole('button', { name: 'Resume', exact: true }).click();
    await waitFor('gen to be RUNNING again', async () =>
      (await connectorState('gen')) === 'RUNNING' ? true : undefined,
    );
    await gen.locator('[data-testid="connector-state"]', { hasText: 'RUNNING' }).waitFor();
  });

  it("shows a FAILED task's trace", async () => {
    const p = await open();
    const failedTask = card(p, 'broken').locator('[data-testid="task"][data-state="FAILED"]');
    await failedTask.waitFor();
    const trace = await failedTask.locator('[data-testid="trace"]').textContent();
    const fromRest = (await rest(worker, 'GET', '/connectors/broken/tasks/0/status')).body;
    expect(fromRest.state).toBe('FAILED');
    expect(trace).toContain('Tolerance exceeded in error handler');
    expect(trace).toBe(fromRest.trace);
  });

  it("tails a topic's records and lists the sinks' consumer groups", async () => {
    const p = await open('topics');
    await p.locator('[data-testid="topic"][data-name="raw"]').getByRole('button').click();
    await p.locator('[data-testid="record-value"]', { hasText: 'not json' }).waitFor();
    await p.getByRole('button', { name: 'Groups' }).click();
    await p.locator('[data-testid="group"][data-name="connect-gen-sink"]').waitFor();
  });

  it("creates a connector from the plugin's form, with the worker's validation shown inline", async () => {
    const p = await open('new');
    const plugins = (await rest(worker, 'GET', '/connector-plugins')).body as Array<{
      class: string;
    }>;
    const sink = plugins.find((c) => c.class.endsWith('FileStreamSinkConnector'))!.class;
    await p.locator('[data-testid="connector-form"] select').selectOption(sink);
    await p.locator('[data-key="name"] input').fill('from-the-page');
    const topicsError = p.locator('[data-key="topics"] .field-error');
    await topicsError.waitFor();
    await p.locator('[data-key="topics"] input').fill('gen');
    await p.locator('[data-key="file"] input').fill(join(tmp.path, 'from-the-page.txt'));
    await topicsError.waitFor({ state: 'detached' });
    await p.getByRole('button', { name: 'Create' }).click();
    await card(p, 'from-the-page').waitFor();
    const info = (await rest(worker, 'GET', '/connectors/from-the-page')).body;
    expect(info.config).toMatchObject({ 'connector.class': sink, topics: 'gen' });
  });
});
