import { splitShellCommand } from '../../src/domain/policy/shell-command';

/** The parts a command line splits into; fails the test, naming the reason, if it does not parse. */
export function parts(command: string): readonly string[] {
  const split = splitShellCommand(command);
  if (!split.parsable) throw new Error(`expected ${JSON.stringify(command)} to parse, got: ${split.reason}`);
  return split.parts;
}

/** Why a command line cannot be read, or undefined when it can. */
export function unparsable(command: string): string | undefined {
  const split = splitShellCommand(command);
  return split.parsable ? undefined : split.reason;
}
