/**
 * Where the scheduler's signed checkpoints go, outside the database (issue 28, part 8): read back by verify,
 * which then needs no checkpoint given. Only a file sink can be read; an https sink answers why not.
 */
export const CHECKPOINT_SINK_READER = Symbol('CheckpointSinkReader');

export interface LatestCheckpoint {
  /** The compact JWS, as written. */
  jws: string;
  /** Its file name in the tenant's directory, e.g. 20261128T141500.000Z-42.jws. */
  name: string;
}

export interface CheckpointSinkReader {
  /**
   * The latest checkpoint written for the tenant, or why there is none to use; `none: null` when there is nothing
   * to say (no sink configured, or none written yet for this tenant): verify then answers as without a sink.
   */
  latest(tenantId: string): Promise<{ found: LatestCheckpoint } | { none: string | null }>;
}
