import type { Provider } from '@nestjs/common';
import { CHECKPOINT_SINK_READER } from '../../application/ports/checkpoint-sink.port';
import { activeSink, TollgateConfig } from '../../infrastructure/config/config';
import { EgressGuard } from '../webhooks/egress-guard';
import { AnchorStore } from './anchor.store';
import { CHECKPOINT_SINK, CheckpointScheduler } from './checkpoint-scheduler';
import { CheckpointSink, FileCheckpointSink, HttpCheckpointSink, NoCheckpointSink } from './checkpoint-sinks';

/** The sink TOLLGATE_CHECKPOINT_SINK names (or the embedded default), or null when anchoring is off. */
export function checkpointSink(config: TollgateConfig): CheckpointSink | null {
  const s = activeSink(config);
  if (s?.kind === 'file') return new FileCheckpointSink(s.dir);
  if (s?.kind === 'http')
    return new HttpCheckpointSink(s.url, new EgressGuard(config.webhooks.allowPrivate), config.webhooks.timeoutMs);
  return null;
}

/** Issue 28, part 8: the scheduler, its store, and the sink verify reads the latest checkpoint from. */
export function anchoringProviders(config: TollgateConfig): Provider[] {
  const sink = checkpointSink(config);
  return [
    { provide: CHECKPOINT_SINK, useFactory: () => sink },
    { provide: CHECKPOINT_SINK_READER, useFactory: () => sink ?? new NoCheckpointSink() },
    AnchorStore,
    CheckpointScheduler,
  ];
}
