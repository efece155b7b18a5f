/** A plugin registry with the built-in converters and transforms plus test transforms. */
import {
  type ConnectRecord,
  DataException,
  definePlugins,
  RetriableException,
} from '../../../../src/connect/api/index.ts';
import { converterPlugins } from '../../../../src/connect/converters/index.ts';
import { PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { transformPlugins } from '../../../../src/connect/transforms/index.ts';

/** Throws DataException for records whose value is the string "bad". */
const rejectBad = definePlugins({
  type: 'transformation',
  className: 'test.RejectBad',
  version: '1',
  configDefs: [],
  create: () => ({
    configure() {},
    apply<R extends ConnectRecord>(record: R): R | null {
      if (record.value === 'bad') throw new DataException('value "bad" is not allowed');
      if (record.value === 'flaky') throw new RetriableException('try again');
      return record;
    },
  }),
});

/** Drops every record whose value is null (counts its calls). */
export const dropCalls = { count: 0 };
const dropNulls = definePlugins({
  type: 'transformation',
  className: 'test.DropNulls',
  version: '1',
  configDefs: [],
  create: () => ({
    configure() {},
    apply<R extends ConnectRecord>(record: R): R | null {
      dropCalls.count++;
      return record.value === null ? null : record;
    },
  }),
});

export function testRegistry(): PluginRegistry {
  const registry = new PluginRegistry();
  registry.add(converterPlugins, 'builtin');
  registry.add(transformPlugins, 'builtin');
  registry.add([...rejectBad, ...dropNulls], 'test');
  return registry;
}
