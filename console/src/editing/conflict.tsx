// What the edit forms share: problems found before sending, in the service's shape, the panel that explains a
// 412 (someone else's edit came first) and offers the stored values or a save over them, and the form's end.
import type { Schemas } from '@cpq/client';
import type { ComponentChildren } from 'preact';
import { localProblem, type Problem } from '../session.ts';
import { ProblemBanner } from '../ui.tsx';

type ProblemItem = Schemas['ProblemItem'];

/** Problems found before sending, in the service's shape, so they show at their fields the same way. */
export function checkedLocally(items: ProblemItem[]): Problem {
  return {
    ...localProblem('The form is not valid', `${items.length} field(s) to correct`, 400),
    code: 'validation_failed',
    errors: items,
  };
}

export function Conflict({
  what,
  children,
  onTake,
  onOverwrite,
}: {
  what: string;
  children: ComponentChildren;
  onTake: () => void;
  onOverwrite: () => void;
}) {
  return (
    <div class="conflict" role="alert" data-status="412">
      <strong>Someone else changed {what} while you were editing.</strong>
      <p>Nothing of yours was saved. These are the values now stored:</p>
      {children}
      <div class="actions">
        <button type="button" onClick={onTake}>
          Use the current values
        </button>
        <button type="button" class="secondary" onClick={onOverwrite}>
          Save mine over them
        </button>
      </div>
    </div>
  );
}

/** The end of an edit form: the problems no field shows, then save and cancel. */
export function FormEnd({
  problem,
  fields,
  busy,
  saveLabel,
  onCancel,
}: {
  problem: Problem | null;
  fields: readonly string[];
  busy: boolean;
  saveLabel: string;
  onCancel: () => void;
}) {
  return (
    <>
      <ProblemBanner problem={problem} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : saveLabel}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
