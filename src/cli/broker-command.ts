/**
 * `connect broker`: the embedded broker alone, until SIGINT/SIGTERM. Config comes from
 * an optional .properties file, BROKER_* variables and `-o key=value`.
 */
import { Command } from 'commander';
import { brokerConfigDefs } from '../config/broker-config.ts';
import type { ConfigError } from '../config/config-def.ts';
import { renderHelpKeys } from '../config/config-reference.ts';
import { loggingDefs } from '../config/logging-config.ts';
import { Shutdown } from '../util/shutdown.ts';
import { type CliContext, EXIT_FAILURE, EXIT_USAGE } from './cli-context.ts';
import { startRegisteredBroker } from './embedded-broker.ts';
import { collectOption, loadForCommand } from './load-for-command.ts';

export const BROKER_ENV_PREFIX = 'BROKER_';

export function brokerCrossChecks(values: Record<string, unknown>): ConfigError[] {
  const min = values['group.min.session.timeout.ms'] as number;
  const max = values['group.max.session.timeout.ms'] as number;
  return min > max
    ? [
        {
          key: 'group.min.session.timeout.ms',
          value: min,
          message: `must not exceed group.max.session.timeout.ms (${max})`,
        },
      ]
    : [];
}

export function brokerCommand(ctx: CliContext, setExitCode: (code: number) => void): Command {
  return new Command('broker')
    .description('Run the embedded Kafka-protocol broker alone, until SIGINT or SIGTERM.')
    .argument('[broker.properties]', 'optional Java .properties file with broker keys')
    .option(
      '-o, --override <key=value>',
      'set a key (repeatable); wins over file and environment',
      collectOption,
    )
    .addHelpText(
      'after',
      [
        '',
        'Precedence: properties file < BROKER_* environment variables < -o key=value.',
        'Environment names: prefix BROKER_, dots become _, a literal _ is __ (BROKER_BROKER_PORT=9093 -> broker.port, BROKER_LOG_RETENTION_MS -> log.retention.ms).',
        '',
        'Keys:',
        renderHelpKeys([...brokerConfigDefs, ...loggingDefs], BROKER_ENV_PREFIX),
      ].join('\n'),
    )
    .action(async (file: string | undefined, opts: { override?: string[] }) => {
      setExitCode(await runBroker(ctx, file, opts.override ?? []));
    });
}

export async function runBroker(
  ctx: CliContext,
  file: string | undefined,
  overrides: string[],
): Promise<number> {
  const values = loadForCommand(ctx, {
    defs: [...brokerConfigDefs, ...loggingDefs],
    file,
    envPrefix: BROKER_ENV_PREFIX,
    options: overrides,
    crossChecks: brokerCrossChecks,
  });
  if (!values) return EXIT_USAGE;
  const shutdown = new Shutdown({
    signals: ctx.signals,
    forceExit: ctx.forceExit,
    timeoutMs: ctx.shutdownTimeoutMs,
  });
  shutdown.installSignalHandlers();
  const broker = await startRegisteredBroker(ctx, values, shutdown, 'broker');
  if (broker.state === 'failed') {
    await shutdown.shutdown();
    return EXIT_FAILURE;
  }
  if (broker.state === 'interrupted') return shutdown.done;
  ctx.err('broker ready; press Ctrl-C (SIGINT) or send SIGTERM to stop it');
  const code = await shutdown.done;
  ctx.err(code === 0 ? 'broker stopped' : 'broker stopped with errors');
  return code;
}
