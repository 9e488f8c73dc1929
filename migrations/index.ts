import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { AuditQueries1763900000000 } from './1763900000000-audit-queries';
import { AuditRetention1764000000000 } from './1764000000000-audit-retention';
import { EventsPrivileges1764100000000 } from './1764100000000-events-privileges';
import { Outbox1764200000000 } from './1764200000000-outbox';
import { HotPath1764300000000 } from './1764300000000-hot-path';
import { ChainHeadLock1764500000000 } from './1764500000000-chain-head-lock';
import { Channels1764400000000 } from './1764400000000-channels';
import { AuditHeadsForwardOnly1764615000000 } from './1764615000000-audit-heads-forward-only';
import { EventsPartitioned1764700000000 } from './1764700000000-events-partitioned';
import { GrantLifecycle1764810000000 } from './1764810000000-grant-lifecycle';
import { Governance1764820000000 } from './1764820000000-governance';
import { Questions1764830000000 } from './1764830000000-questions';
import { OpenQuestionLimit1764840000000 } from './1764840000000-open-question-limit';
import { Persons1764850000000 } from './1764850000000-persons';
import { WebSessions1764860000000 } from './1764860000000-web-sessions';
import { Passkeys1764870000000 } from './1764870000000-passkeys';
import { ConversationUserAssurance1764880000000 } from './1764880000000-conversation-user-assurance';
import { PasskeyChallengePurposes1764890000000 } from './1764890000000-passkey-challenge-purposes';
import { UnusedWriteIndexes1764900000000 } from './1764900000000-unused-write-indexes';
import { AnalyzeWhatPlansUse1764900000001 } from './1764900000001-analyze-what-plans-use';
import { ChainHeadAt1764900000002 } from './1764900000002-chain-head-at';
import { HaltFence1764900000003 } from './1764900000003-halt-fence';
import { ReachPeople1764910000000 } from './1764910000000-reach-people';
import { SlackMessagesByMessage1764910000001 } from './1764910000001-slack-messages-by-message';
import { NotificationPreferences1764930000000 } from './1764930000000-notification-preferences';
import { Delegations1764920000000 } from './1764920000000-delegations';
import { ReviewSchemasPreviews1764940000000 } from './1764940000000-review-schemas-previews';
import { ReviewerViewsAndAnchors1765080000000 } from './1765080000000-reviewer-views-and-anchors';
import { PendingChanges1765100000000 } from './1765100000000-pending-changes';
import { SecretRedaction1765110000000 } from './1765110000000-secret-redaction';
import { StandingDeniesAndUses1765120000000 } from './1765120000000-standing-denies-and-uses';

/** Listed explicitly so the built server, the CLI and the tests all run the same migrations. */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  AuditQueries1763900000000,
  AuditRetention1764000000000,
  EventsPrivileges1764100000000,
  Outbox1764200000000,
  HotPath1764300000000,
  Channels1764400000000,
  ChainHeadLock1764500000000,
  AuditHeadsForwardOnly1764615000000,
  EventsPartitioned1764700000000,
  GrantLifecycle1764810000000,
  Governance1764820000000,
  Questions1764830000000,
  OpenQuestionLimit1764840000000,
  Persons1764850000000,
  WebSessions1764860000000,
  Passkeys1764870000000,
  ConversationUserAssurance1764880000000,
  PasskeyChallengePurposes1764890000000,
  UnusedWriteIndexes1764900000000,
  AnalyzeWhatPlansUse1764900000001,
  ChainHeadAt1764900000002,
  HaltFence1764900000003,
  ReachPeople1764910000000,
  SlackMessagesByMessage1764910000001,
  NotificationPreferences1764930000000,
  Delegations1764920000000,
  ReviewSchemasPreviews1764940000000,
  ReviewerViewsAndAnchors1765080000000,
  PendingChanges1765100000000,
  SecretRedaction1765110000000,
  StandingDeniesAndUses1765120000000,
];
