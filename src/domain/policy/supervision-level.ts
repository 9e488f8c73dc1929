/** How closely a person supervises a call, strictest first (CONTRACT §5). */
export const SUPERVISION_LEVELS = ['deny', 'manual', 'confirm', 'notify', 'automatic'] as const;
export type SupervisionLevel = (typeof SUPERVISION_LEVELS)[number];

export function isSupervisionLevel(v: unknown): v is SupervisionLevel {
  return typeof v === 'string' && (SUPERVISION_LEVELS as readonly string[]).includes(v);
}

/** Lower is stricter: `deny` is 0, `automatic` 4. */
export function strictness(level: SupervisionLevel): number {
  return SUPERVISION_LEVELS.indexOf(level);
}

/** The stricter of two levels (the first on a tie). */
export function stricter(a: SupervisionLevel, b: SupervisionLevel): SupervisionLevel {
  return strictness(b) < strictness(a) ? b : a;
}

/** Levels at which a person must decide before the call runs. */
export function needsPerson(level: SupervisionLevel): boolean {
  return level === 'confirm' || level === 'manual';
}
