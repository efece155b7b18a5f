import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { kcat } from './helpers/kcat.ts';

let b: TestBroker;

beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b?.stop());

describe('ApiVersions with kcat (librdkafka 2.0)', () => {
  it('negotiates with a v3 ApiVersions answer, with no UNSUPPORTED_VERSION retry', async () => {
    const { stdout, stderr } = await kcat(['-b', b.bootstrap, '-L', '-d', 'protocol,feature']);
    const log = `${stdout}\n${stderr}`;
    expect(log).toMatch(/Received ApiVersionResponse \(v3,/);
    expect(log).not.toMatch(/UNSUPPORTED_VERSION|Unsupported version/i);
    expect(log).toMatch(/ApiKey ApiVersion \(18\) Versions 0\.\.4/);
    expect(stdout).toContain(`broker 1 at 127.0.0.1:${b.port}`);
  });
});
