// Shared pieces: loading data, showing problems at their fields, page titles.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { itemText, problemSentence } from './messages.ts';
import { type Problem, problemOf } from './session.ts';

export interface Loaded<T> {
  data: T | undefined;
  problem: Problem | null;
  reload: () => void;
}

/** Loads data when the keys change; answers from an older load are dropped. */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; problem: Problem | null }>({
    data: undefined,
    problem: null,
  });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    load().then(
      (data) => run === latest.current && setState({ data, problem: null }),
      (error: unknown) => run === latest.current && setState({ data: undefined, problem: problemOf(error) }),
    );
  }, [...keys, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · cpq console`;
  }, [title]);
}

/** The messages of a problem's items at one pointer. */
export function messagesAt(problem: Problem | null, pointer: string): string[] {
  return (problem?.errors ?? []).filter((item) => item.pointer === pointer).map((item) => item.message);
}

let nextId = 0;
function useId(prefix: string): string {
  const id = useRef<string | null>(null);
  id.current ??= `${prefix}-${++nextId}`;
  return id.current;
}

/**
 * A labelled input with the problems the service found at its JSON pointer beside it. `data-pointer` names the
 * field for people reading the markup and for the browser tests.
 */
export function Field({
  label,
  pointer,
  problem,
  children,
  hint,
}: {
  label: string;
  pointer: string;
  problem: Problem | null;
  hint?: string;
  children: (props: {
    id: string;
    'aria-invalid': boolean;
    'aria-describedby'?: string;
  }) => ComponentChildren;
}) {
  const id = useId('field');
  const messages = messagesAt(problem, pointer);
  const describedBy = messages.length > 0 ? `${id}-error` : hint ? `${id}-hint` : undefined;
  return (
    <div class={messages.length > 0 ? 'field invalid' : 'field'} data-pointer={pointer}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-invalid': messages.length > 0, 'aria-describedby': describedBy })}
      {hint && messages.length === 0 && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {messages.length > 0 && (
        <small id={`${id}-error`} class="field-error">
          {messages.join('; ')}
        </small>
      )}
    </div>
  );
}

/** A problem's title and detail, and every item whose pointer no field of the form shows. */
export function ProblemBanner({
  problem,
  fields = [],
}: {
  problem: Problem | null;
  fields?: readonly string[];
}) {
  if (problem === null) return null;
  const shown = new Set(fields);
  const rest = (problem.errors ?? []).filter((item) => !shown.has(item.pointer));
  return (
    <div class="problem" role="alert" data-status={problem.status} data-code={problem.code}>
      <strong>{problemSentence(problem)}</strong>
      {problem.detail && (problem.errors ?? []).length === 0 && <p>{problem.detail}</p>}
      {rest.length > 0 && (
        <ul>
          {rest.map((item) => (
            <li key={`${item.pointer}:${item.message}`} data-pointer={item.pointer}>
              {itemText(item)}
            </li>
          ))}
        </ul>
      )}
      {problem.requestId && <small class="muted">Request {problem.requestId}</small>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** A number typed into a form: null when empty, NaN when not a number (caught before sending). */
export function parseNumber(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : Number.NaN;
}

export function numberText(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : String(value);
}

/**
 * A delete that asks first: the button opens a confirmation in place, naming what goes, and only "Yes, delete"
 * deletes. Keyboard focus moves to the question and back.
 */
export function ConfirmDelete({
  what,
  consequence,
  onConfirm,
  label = 'Delete',
}: {
  what: string;
  consequence?: string;
  onConfirm: () => Promise<void> | void;
  label?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const question = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (asking) question.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="secondary danger" onClick={() => setAsking(true)}>
        {label}
        <span class="visually-hidden"> {what}</span>
      </button>
    );
  }
  return (
    <div class="confirm" role="alertdialog" aria-label={`Delete ${what}?`} tabIndex={-1} ref={question}>
      <p>
        Delete {what}?{consequence ? ` ${consequence}` : ''} This cannot be undone.
      </p>
      <div class="actions">
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await onConfirm();
            } finally {
              setBusy(false);
              setAsking(false);
            }
          }}
        >
          Yes, delete
        </button>
        <button type="button" class="secondary" onClick={() => setAsking(false)}>
          Keep it
        </button>
      </div>
    </div>
  );
}
