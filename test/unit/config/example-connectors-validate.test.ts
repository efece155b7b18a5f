import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { readConnectorFile } from '../../../src/config/connector-file.ts';
import {
  configErrorMessages,
  validateConnectorConfig,
  validationContext,
} from '../../../src/connect/runtime/config-validation.ts';
import { loadPlugins, type PluginRegistry } from '../../../src/connect/runtime/plugins.ts';
import { getLogger } from '../../../src/util/logger.ts';

const examples = fileURLToPath(new URL('../../../config/connectors', import.meta.url));
const connectors = fileURLToPath(new URL('../../../connectors', import.meta.url));

let plugins: PluginRegistry;
beforeAll(async () => {
  plugins = await loadPlugins({ pluginPath: [connectors], logger: getLogger('test.plugins') });
}, 60_000);

describe('the example connector files in config/connectors', () => {
  it.each(readdirSync(examples))('%s passes validation as it is', (file) => {
    const result = readConnectorFile(join(examples, file));
    if (!result.ok) throw new Error(`${file} does not read`);
    const { name, config } = result.file;

    const infos = validateConnectorConfig(plugins, config, validationContext(name, []));

    expect(configErrorMessages(infos)).toEqual([]);
  });
});
