/**
 * AlterConfigs (key 33) and IncrementalAlterConfigs (key 44) on topics.
 *
 * AlterConfigs replaces a topic's overrides with exactly the given set;
 * IncrementalAlterConfigs applies SET (0), DELETE (1), APPEND (2) and SUBTRACT (3,
 * list keys only). The log manager validates and persists the result, validateOnly
 * changes nothing. Broker configs are static here (read at start from the broker's
 * properties): altering them is INVALID_REQUEST with a message saying so.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { LogError } from '../log/errors.ts';
import type { AlterOp } from '../log/log-manager.ts';
import type { BrokerServices } from './broker-services.ts';
import { RESOURCE_BROKER, RESOURCE_TOPIC } from './describe-configs.ts';
import { toErrorAnswer } from './errors.ts';
import type { RequestHandler } from './handler.ts';

const OPS = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'] as const;

function forEachResource(body: Message, alterTopic: (r: Message) => void): Message {
  const responses = (body.resources as Message[]).map((r) => {
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    if (r.resourceType === RESOURCE_BROKER) {
      return {
        ...base,
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: 'Broker configs are static: set them in the broker properties and restart.',
      };
    }
    if (r.resourceType !== RESOURCE_TOPIC) {
      return {
        ...base,
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Resource type ${r.resourceType} is not supported (2 topic)`,
      };
    }
    try {
      alterTopic(r);
      return { ...base, errorCode: 0, errorMessage: null };
    } catch (e) {
      return { ...base, ...toErrorAnswer(e) };
    }
  });
  return { throttleTimeMs: 0, responses };
}

export const handleAlterConfigs: RequestHandler<BrokerServices> = (body, _context, services) =>
  forEachResource(body, (r) => {
    const configs: Record<string, string> = {};
    for (const c of r.configs as Array<{ name: string; value: string | null }>) {
      if (c.value !== null) configs[c.name] = c.value;
    }
    services.logs.alterConfigs(r.resourceName, configs, {
      validateOnly: body.validateOnly === true,
    });
  });

export const handleIncrementalAlterConfigs: RequestHandler<BrokerServices> = (
  body,
  _context,
  services,
) =>
  forEachResource(body, (r) => {
    const ops: AlterOp[] = [];
    for (const c of r.configs as Array<{
      name: string;
      configOperation: number;
      value: string | null;
    }>) {
      const op = OPS[c.configOperation];
      if (op === undefined)
        throw invalid(`Unknown config operation ${c.configOperation} for ${c.name}`);
      if (op === 'DELETE') ops.push({ key: c.name, op });
      else {
        if (c.value === null) throw invalid(`Operation ${op} on ${c.name} needs a value`);
        ops.push({ key: c.name, op, value: c.value });
      }
    }
    services.logs.incrementalAlterConfigs(r.resourceName, ops, {
      validateOnly: body.validateOnly === true,
    });
  });

function invalid(message: string): Error {
  return new LogError('INVALID_CONFIG', message);
}
