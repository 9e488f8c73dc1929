/**
 * A person named as an approver (`person:ann`, `person:ann@example.com`), beside roles: by their id (the token's
 * `sub`) or their email, compared case-insensitively. Kept lowercased as written in the policy.
 */
export const PERSON_PREFIX = 'person:';
/** The longest id or email a `person:` reference may name: an email's own limit (RFC 5321), and more than a `sub`'s. */
export const MAX_PERSON_REFERENCE = 320;
/** Printable and without whitespace: no control, format, separator or unassigned code points. */
const PRINTABLE = /^[^\p{C}\p{Z}]+$/u;

/** What `person:<x>` names, lowercased; undefined for a role (or `requester`). */
export function personAssignee(approver: string): string | undefined {
  if (!approver.startsWith(PERSON_PREFIX)) return undefined;
  const named = approver.slice(PERSON_PREFIX.length).trim().toLowerCase();
  return named === '' ? undefined : named;
}

export const isPersonAssignee = (approver: string): boolean => approver.startsWith(PERSON_PREFIX);

/** The entries of `approvers` that are roles (and `requester`): a token's role never matches a `person:` entry. */
export function rolesAmong(approvers: readonly string[]): string[] {
  return approvers.filter((a) => !isPersonAssignee(a));
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

/**
 * The `person:` entries that would name this person, as stored (lowercased): what SQL compares a call's approvers
 * with, so a list of calls finds the ones naming them without reading every call.
 */
export function personReferencesOf(p: { id: string; email?: string }): string[] {
  const refs = [`${PERSON_PREFIX}${p.id.toLowerCase()}`];
  if (p.email) refs.push(`${PERSON_PREFIX}${p.email.toLowerCase()}`);
  return [...new Set(refs)];
}

/**
 * A `person:` entry as a new policy may write it: the reference lowercased, or why it is refused. The bounds keep
 * a typo from passing as a name (an id or email never holds whitespace) and a document from carrying an essay.
 */
export function readPersonReference(entry: string): { ok: true; value: string } | { ok: false; why: string } {
  const ref = entry.slice(PERSON_PREFIX.length);
  if (ref === '') return { ok: false, why: `names no one: write ${PERSON_PREFIX}<id or email>` };
  if ([...ref].length > MAX_PERSON_REFERENCE)
    return { ok: false, why: `names an id or email longer than ${MAX_PERSON_REFERENCE} characters` };
  if (!PRINTABLE.test(ref))
    return { ok: false, why: 'must name an id or email without whitespace or control characters' };
  return { ok: true, value: `${PERSON_PREFIX}${ref.toLowerCase()}` };
}
