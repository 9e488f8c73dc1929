import type { ComponentChildren } from 'preact';

/**
 * What the server (or the form) says is wrong with one field, under it. The field points at it with
 * aria-describedby and is marked aria-invalid, so a screen reader reads it with the field.
 */
export function FieldError({ id, children }: { id: string; children?: ComponentChildren }) {
  if (!children) return null;
  return (
    <p id={id} class="field-error" data-testid={id}>
      {children}
    </p>
  );
}

/** The ids a field is described by: its hint, and its error while there is one. */
export function describedBy(hint: string | undefined, errorId: string, error: string | undefined): string | undefined {
  return [hint, error ? errorId : undefined].filter(Boolean).join(' ') || undefined;
}

/** Moves focus to the first field the form marked invalid, once it has rendered, so the person lands on it. */
export function focusFirstInvalid(form: HTMLFormElement | null): void {
  requestAnimationFrame(() => form?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
}
