/**
 * A person named as an approver (`person:ann`, `person:ann@example.com`), beside roles: by their id (the token's
 * `sub`) or their email, compared case-insensitively. Kept lowercased as written in the policy.
 */
export const PERSON_PREFIX = 'person:';

/** What `person:<x>` names, lowercased; undefined for a role (or `requester`). */
export function personAssignee(approver: string): string | undefined {
  if (!approver.startsWith(PERSON_PREFIX)) return undefined;
  const named = approver.slice(PERSON_PREFIX.length).trim().toLowerCase();
  return named === '' ? undefined : named;
}

/** True when one of `approvers` names this person, by id or by email. */
export function namesPerson(approvers: readonly string[], p: { id: string; email?: string }): boolean {
  const id = p.id.toLowerCase();
  const email = p.email?.toLowerCase();
  return approvers.some((a) => {
    const named = personAssignee(a);
    return named !== undefined && (named === id || (email !== undefined && named === email));
  });
}
