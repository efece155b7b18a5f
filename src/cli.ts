/**
 * The `connect` command line: `connect worker|standalone|broker|demo`, each with --help
 * listing its config keys. bin/connect.js calls main() and exits with what it returns;
 * tests call main() in-process with a captured context.
 *
 * Exit codes: 0 after a clean shutdown, 1 on a run-time failure (or a part that is not
 * built yet), 2 on bad usage or bad configuration, 130 when a second signal forces exit.
 */
import { Command, CommanderError } from 'commander';
import { brokerCommand } from './cli/broker-command.ts';
import { type CliContext, EXIT_USAGE, processContext } from './cli/cli-context.ts';
import { demoCommand } from './cli/demo-command.ts';
import { standaloneCommand } from './cli/standalone-command.ts';
import { workerCommand } from './cli/worker-command.ts';

export async function main(argv: string[], context?: CliContext): Promise<number> {
  const ctx = context ?? processContext();
  let exitCode = 0;
  const setExitCode = (code: number) => {
    exitCode = code;
  };
  const program = new Command('connect')
    .description(
      'A Kafka Connect-style integration runtime with an embedded Kafka-protocol broker.',
    )
    .configureOutput({
      writeOut: (s) => ctx.out(s.replace(/\n$/, '')),
      writeErr: (s) => ctx.err(s.replace(/\n$/, '')),
    })
    .exitOverride()
    .showHelpAfterError('(add --help for usage and keys)');
  for (const sub of [
    workerCommand(ctx, setExitCode),
    standaloneCommand(ctx, setExitCode),
    brokerCommand(ctx, setExitCode),
    demoCommand(ctx, setExitCode),
  ]) {
    program.addCommand(
      sub
        .configureOutput({
          writeOut: (s) => ctx.out(s.replace(/\n$/, '')),
          writeErr: (s) => ctx.err(s.replace(/\n$/, '')),
        })
        .exitOverride(),
    );
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version end with code 0; every usage mistake is a 2, like config errors.
      return e.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    throw e;
  }
  if (!context) exitEvenIfSomethingLeaked(exitCode);
  return exitCode;
}

/**
 * After a command has returned, everything it started has been stopped, so the process
 * should exit by itself. If a leaked handle (a socket, a timer, a thread) keeps it
 * alive, say so and exit anyway rather than hang a container's restart. The timer is
 * unref'd: a clean process exits at once without waiting for it.
 */
function exitEvenIfSomethingLeaked(code: number): void {
  const timer = setTimeout(() => {
    process.stderr.write(
      'warning: something was still running 5 s after shutdown (a leaked handle); exiting anyway\n',
    );
    process.exit(code);
  }, 5000);
  timer.unref();
}
