import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DelegatedAuthority } from '../../application/persons/delegated-authority';
import { CLOCK, Clock, READ_MODEL, ReadModel } from '../../application/ports';
import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import { PERSONS, PersonRepository } from '../../application/ports/person.port';
import type { Person } from '../../domain/person/person';
import { staleSignIn } from '../../domain/person/rules/channel-link';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import type { ReachChannel } from './preferences';
import { DueDigest, ReachStore } from './reach.store';

/** A channel that sends a person one digest of the calls that wait for them. */
export interface DigestSender {
  readonly channel: ReachChannel;
  /** `more`: more calls wait than the digest lists. */
  sendDigest(person: Person, waiting: ApprovalRequest[], more: boolean): Promise<void>;
}

export const DIGEST_SENDERS = Symbol('DigestSenders');

/** The most calls one digest lists; it says how many more wait. */
export const DIGEST_MAX_CALLS = 25;
/** Digests taken per run. */
const BATCH = 50;
/** A digest that could not be sent is due again after this long. */
const RETRY_MS = 60_000;

/**
 * Sends the digests that are due (every TOLLGATE_OUTBOX_POLL_MS): for each, what waits for the person *when it is
 * sent* — the pending calls they may decide, as their inbox lists them — so a call decided meanwhile is not in it,
 * and nothing is sent when nothing waits. A person whose sign-in is older than TOLLGATE_PERSON_MAX_AGE gets none
 * (their roles are not trusted any longer). Each due digest is taken by one instance; one that fails is due again.
 */
@Injectable()
export class DigestRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('Digests');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly store: ReachStore,
    @Inject(DIGEST_SENDERS) private readonly senders: DigestSender[],
    @Inject(READ_MODEL) private readonly reads: ReadModel,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly delegated: DelegatedAuthority,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.sweepIntervalMs > 0)
      this.timer = setInterval(() => void this.tick(), Math.max(50, this.config.outboxPollMs)).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async tick(): Promise<void> {
    if (this.running) return;
    this.running = this.run()
      .catch((e: unknown) => this.log.warn(`digest run failed: ${(e as Error).message}`))
      .finally(() => (this.running = undefined));
    await this.running;
  }

  private async run(): Promise<void> {
    const due = await this.store.takeDue(this.clock.now(), BATCH);
    for (const d of due) {
      try {
        await this.send(d);
      } catch (e) {
        this.log.warn(`${d.channel} digest for person ${d.personId} failed (${(e as Error).message}); due again`);
        await this.store.digestDue(d, new Date(this.clock.now().getTime() + RETRY_MS));
      }
    }
  }

  private async send(d: DueDigest): Promise<void> {
    const sender = this.senders.find((s) => s.channel === d.channel);
    if (!sender) return; // the channel is not set up on this server
    const person = await this.persons.find(d.tenantId, d.personId);
    if (!person || staleSignIn(person, this.clock.now(), this.config.personMaxAgeSeconds)) return;
    const principal = {
      id: person.id,
      tenant: person.tenantId,
      roles: [...person.roles],
      ...(person.email ? { email: person.email } : {}),
    };
    // As their inbox lists it: what they may decide, and what the people who delegated to them may.
    const waiting = await this.reads.listApprovals(
      principal,
      { status: 'pending', limit: DIGEST_MAX_CALLS },
      await this.delegated.of(principal, this.clock.now()),
    );
    if (waiting.items.length === 0) return;
    await sender.sendDigest(
      person,
      waiting.items.map((v) => ({ ...v, tenantId: d.tenantId })),
      waiting.nextCursor !== null,
    );
  }
}
