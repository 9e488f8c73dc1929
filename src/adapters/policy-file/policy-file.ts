import type { LoggerService } from '@nestjs/common';
import type { CommandBus } from '@nestjs/cqrs';
import { readFileSync, Stats, unwatchFile, watchFile } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { PutPolicyCommand } from '../../application/commands/put-policy/put-policy.command';
import { SYSTEM_ACTOR } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';

/** Who the policy file's versions are recorded as made by. */
export const POLICY_FILE_ACTOR = { ...SYSTEM_ACTOR, id: 'policy-file' };

/** The file's document: JSON for a `.json` name, else YAML (a superset of JSON). Throws when unreadable or unparsable. */
export function readPolicyFile(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  return /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 50 });
}

/**
 * Applies the document as tenant `default`'s policy only when it differs from the version in force. PUT's
 * command takes the policy's advisory lock and compares under it, so instances watching one file make one
 * version between them, not one each.
 */
export function applyPolicyDocument(
  commands: CommandBus,
  document: unknown,
): Promise<{ policy: { version: number }; changed: boolean }> {
  return commands.execute(
    new PutPolicyCommand('default', POLICY_FILE_ACTOR, document, { onlyIfChanged: true, source: 'file' }),
  );
}

export interface PolicyFileWatcherOptions {
  /** How often the file is stat-ed. */
  intervalMs?: number;
  /** Quiet time after the last change before the file is read (editors write in steps). */
  debounceMs?: number;
}

/**
 * Reloads `TOLLGATE_POLICY_FILE` when it changes. It polls the file's stat (fs.watchFile) rather than using
 * fs.watch: editors and config management often replace the file (write a new one, rename it over the old),
 * which ends an fs.watch on the old inode, and polling also works on network and container-mounted files. A
 * file that is invalid, unreadable or gone is logged in one line and the version in force stays.
 */
export class PolicyFileWatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly listener = (curr: Stats, prev: Stats) => this.changed(curr, prev);

  constructor(
    private readonly commands: CommandBus,
    private readonly path: string,
    private readonly log: Pick<LoggerService, 'log' | 'error'>,
    private readonly opts: PolicyFileWatcherOptions = {},
  ) {}

  start(): this {
    // Not persistent: a watcher alone never keeps the process alive.
    watchFile(this.path, { interval: this.opts.intervalMs ?? 1000, persistent: false }, this.listener);
    return this;
  }

  /** Stops watching and waits for a reload under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    unwatchFile(this.path, this.listener);
    clearTimeout(this.timer);
    await this.running;
  }

  private changed(curr: Stats, prev: Stats): void {
    if (this.stopped) return;
    if (curr.mtimeMs === prev.mtimeMs && curr.size === prev.size && curr.ino === prev.ino) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      // One reload at a time, in order: a change during a reload is read after it.
      this.running = this.running.then(() => this.reload());
    }, this.opts.debounceMs ?? 300);
  }

  private async reload(): Promise<void> {
    if (this.stopped) return;
    let document: unknown;
    try {
      document = readPolicyFile(this.path);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'is gone' : `cannot be read: ${firstLine(e)}`;
      return this.log.error(`TOLLGATE_POLICY_FILE ${this.path} ${why}; the policy in force stays`);
    }
    try {
      const { policy, changed } = await applyPolicyDocument(this.commands, document);
      this.log.log(
        changed
          ? `Reloaded ${this.path} as policy version ${policy.version}`
          : `${this.path} changed and matches policy version ${policy.version}`,
      );
    } catch (e) {
      const why = e instanceof DomainError && e.kind === 'invalid' ? 'is not a valid policy' : 'could not be applied';
      this.log.error(`TOLLGATE_POLICY_FILE ${this.path} ${why}: ${firstLine(e)}; the policy in force stays`);
    }
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}
