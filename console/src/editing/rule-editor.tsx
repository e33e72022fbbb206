// A configuration rule: its condition (one selector, all or any of several, not one, or any deeper condition as
// JSON) and the products it requires or excludes.
import type { Schemas } from '@cpq/client';
import { useEffect, useState } from 'preact/hooks';
import { describeRule, type Names } from '../format.ts';
import { call, type Problem, ProblemError, problemOf, type Session } from '../session.ts';
import { Field, Loading, ProblemBanner } from '../ui.tsx';
import { Conflict, checkedLocally, FormEnd } from './conflict.tsx';

type Selector = Schemas['RuleSelector'];
type WhenMode = 'one' | 'all' | 'any' | 'not' | 'json';

interface RuleForm {
  name: string;
  kind: 'requires' | 'excludes';
  mode: WhenMode;
  when: Selector[];
  whenJson: string;
  then: Selector[];
  message: string;
  isActive: boolean;
}

export interface OptionChoice {
  id: string;
  name: string;
  products: string[];
}

function isSelector(value: unknown): value is Selector {
  return typeof value === 'object' && value !== null && 'optionId' in value;
}

function formOf(rule: Schemas['Rule'] | null, options: OptionChoice[]): RuleForm {
  const first: Selector = { optionId: options[0]?.id ?? '' };
  if (rule === null) {
    return {
      name: '',
      kind: 'requires',
      mode: 'one',
      when: [first],
      whenJson: '',
      then: [first],
      message: '',
      isActive: true,
    };
  }
  const base = {
    name: rule.name,
    kind: rule.kind,
    then: rule.then,
    message: rule.message ?? '',
    isActive: rule.isActive,
    whenJson: JSON.stringify(rule.when, null, 2),
  };
  const when = rule.when as unknown as Record<string, unknown>;
  if (isSelector(when)) return { ...base, mode: 'one', when: [when] };
  for (const mode of ['all', 'any'] as const) {
    const list = when[mode];
    if (Array.isArray(list) && list.every(isSelector)) return { ...base, mode, when: list };
  }
  if (isSelector(when.not)) return { ...base, mode: 'not', when: [when.not] };
  return { ...base, mode: 'json', when: [first] };
}

function SelectorFields({
  selector,
  pointer,
  options,
  problem,
  onChange,
  onRemove,
}: {
  selector: Selector;
  pointer: string;
  options: OptionChoice[];
  problem: Problem | null;
  onChange: (selector: Selector) => void;
  onRemove?: () => void;
}) {
  const option = options.find((o) => o.id === selector.optionId);
  return (
    <div class="row selector">
      <Field label="Option" pointer={`${pointer}/optionId`} problem={problem}>
        {(props) => (
          <select
            {...props}
            value={selector.optionId}
            onChange={(e) => onChange({ optionId: e.currentTarget.value })}
          >
            {options.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Product" pointer={`${pointer}/productId`} problem={problem}>
        {(props) => (
          <select
            {...props}
            value={selector.productId ?? ''}
            onChange={(e) =>
              onChange(
                e.currentTarget.value === ''
                  ? { optionId: selector.optionId }
                  : { optionId: selector.optionId, productId: e.currentTarget.value },
              )
            }
          >
            <option value="">Any product of the option</option>
            {(option?.products ?? []).map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        )}
      </Field>
      {onRemove && (
        <button type="button" class="secondary small" onClick={onRemove}>
          Remove
        </button>
      )}
    </div>
  );
}

export function RuleEditor({
  session,
  bundleId,
  ruleId,
  options,
  names,
  onClose,
}: {
  session: Session;
  bundleId: string;
  /** null: a new rule. */
  ruleId: string | null;
  options: OptionChoice[];
  names: Names;
  onClose: (saved: boolean) => void;
}) {
  const [state, setState] = useState<{ form: RuleForm; etag: string | null } | null>(
    ruleId === null ? { form: formOf(null, options), etag: null } : null,
  );
  const [problem, setProblem] = useState<Problem | null>(null);
  const [conflict, setConflict] = useState<{ rule: Schemas['Rule']; etag: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const read = async () => {
    const { data, etag } = await call(
      session.api.GET('/v1/bundles/{bundleId}/rules/{ruleId}', {
        params: { path: { bundleId, ruleId: ruleId ?? '' } },
      }),
    );
    return { rule: data, etag };
  };
  useEffect(() => {
    if (ruleId !== null) {
      read().then(
        ({ rule, etag }) => setState({ form: formOf(rule, options), etag }),
        (error) => setProblem(problemOf(error)),
      );
    }
  }, []);
  if (state === null) return problem ? <ProblemBanner problem={problem} /> : <Loading what="the rule" />;
  const { form } = state;
  const set = (change: Partial<RuleForm>) => setState({ ...state, form: { ...form, ...change } });

  const save = async (etag: string | null) => {
    let when: unknown;
    if (form.mode === 'json') {
      try {
        when = JSON.parse(form.whenJson);
      } catch {
        return setProblem(
          checkedLocally([
            { code: 'malformed_json', in: 'body', pointer: '/when', message: 'is not valid JSON' },
          ]),
        );
      }
    } else if (form.mode === 'one') when = form.when[0];
    else if (form.mode === 'not') when = { not: form.when[0] };
    else when = { [form.mode]: form.when };
    const body: Schemas['RuleBody'] = {
      name: form.name,
      kind: form.kind,
      when: when as Schemas['RuleCondition'],
      then: form.then,
      message: form.message.trim() === '' ? null : form.message,
      isActive: form.isActive,
    };
    setBusy(true);
    try {
      if (ruleId === null) {
        await call(
          session.api.POST('/v1/bundles/{bundleId}/rules', { params: { path: { bundleId } }, body }),
        );
      } else {
        await call(
          session.api.PUT('/v1/bundles/{bundleId}/rules/{ruleId}', {
            params: { path: { bundleId, ruleId }, header: etag ? { 'if-match': etag } : {} },
            body,
          }),
        );
      }
      onClose(true);
    } catch (error) {
      const found = error instanceof ProblemError ? error.problem : problemOf(error);
      if (found.status === 412) {
        setProblem(null);
        setConflict(await read().catch(() => null));
      } else setProblem(found);
    } finally {
      setBusy(false);
    }
  };

  const whenPointer = (i: number) =>
    form.mode === 'one' ? '/when' : form.mode === 'not' ? '/when/not' : `/when/${form.mode}/${i}`;
  const fields = [
    '/name',
    '/kind',
    '/message',
    '/when',
    ...form.when.flatMap((_, i) => [`${whenPointer(i)}/optionId`, `${whenPointer(i)}/productId`]),
    ...form.then.flatMap((_, i) => [`/then/${i}/optionId`, `/then/${i}/productId`]),
  ];
  return (
    <form
      class="editor"
      aria-label={ruleId === null ? 'New rule' : 'Edit rule'}
      onSubmit={(event) => {
        event.preventDefault();
        save(state.etag);
      }}
    >
      <h3>{ruleId === null ? 'New rule' : `Rule ${form.name}`}</h3>
      {conflict && (
        <Conflict
          what="this rule"
          onTake={() => {
            setState({ form: formOf(conflict.rule, options), etag: conflict.etag });
            setConflict(null);
          }}
          onOverwrite={() => {
            setState({ ...state, etag: conflict.etag });
            setConflict(null);
            save(conflict.etag);
          }}
        >
          <p>
            <strong>{conflict.rule.name}</strong>: {describeRule(conflict.rule, names)}
            {conflict.rule.isActive ? '' : ' (inactive)'}
          </p>
        </Conflict>
      )}
      <div class="row">
        <Field label="Name" pointer="/name" problem={problem}>
          {(props) => (
            <input {...props} value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Kind" pointer="/kind" problem={problem}>
          {(props) => (
            <select
              {...props}
              value={form.kind}
              onChange={(e) => set({ kind: e.currentTarget.value as RuleForm['kind'] })}
            >
              <option value="requires">Requires</option>
              <option value="excludes">Excludes</option>
            </select>
          )}
        </Field>
        <label class="check">
          <input
            type="checkbox"
            checked={form.isActive}
            onChange={(e) => set({ isActive: e.currentTarget.checked })}
          />
          Active
        </label>
      </div>
      <fieldset>
        <legend>When</legend>
        <div class="field">
          <label for="rule-when-mode">Condition</label>
          <select
            id="rule-when-mode"
            value={form.mode}
            onChange={(e) => set({ mode: e.currentTarget.value as WhenMode })}
          >
            <option value="one">This is chosen</option>
            <option value="all">All of these are chosen</option>
            <option value="any">Any of these is chosen</option>
            <option value="not">This is not chosen</option>
            <option value="json">A deeper condition (JSON)</option>
          </select>
        </div>
        {form.mode === 'json' ? (
          <Field label="Condition as JSON" pointer="/when" problem={problem}>
            {(props) => (
              <textarea
                {...props}
                rows={6}
                class="mono"
                value={form.whenJson}
                onInput={(e) => set({ whenJson: e.currentTarget.value })}
              />
            )}
          </Field>
        ) : (
          (form.mode === 'one' || form.mode === 'not' ? form.when.slice(0, 1) : form.when).map(
            (selector, i) => (
              <SelectorFields
                key={i}
                selector={selector}
                pointer={whenPointer(i)}
                options={options}
                problem={problem}
                onChange={(next) => set({ when: form.when.map((s, j) => (j === i ? next : s)) })}
                onRemove={
                  form.when.length > 1 ? () => set({ when: form.when.filter((_, j) => j !== i) }) : undefined
                }
              />
            ),
          )
        )}
        {(form.mode === 'all' || form.mode === 'any') && (
          <button
            type="button"
            class="secondary small"
            onClick={() => set({ when: [...form.when, { optionId: options[0]?.id ?? '' }] })}
          >
            Add a condition
          </button>
        )}
      </fieldset>
      <fieldset>
        <legend>{form.kind === 'requires' ? 'Then require' : 'Then exclude'}</legend>
        {form.then.map((selector, i) => (
          <SelectorFields
            key={i}
            selector={selector}
            pointer={`/then/${i}`}
            options={options}
            problem={problem}
            onChange={(next) => set({ then: form.then.map((s, j) => (j === i ? next : s)) })}
            onRemove={
              form.then.length > 1 ? () => set({ then: form.then.filter((_, j) => j !== i) }) : undefined
            }
          />
        ))}
        <button
          type="button"
          class="secondary small"
          onClick={() => set({ then: [...form.then, { optionId: options[0]?.id ?? '' }] })}
        >
          Add a product
        </button>
      </fieldset>
      <Field label="Message for sales reps" pointer="/message" problem={problem}>
        {(props) => (
          <input {...props} value={form.message} onInput={(e) => set({ message: e.currentTarget.value })} />
        )}
      </Field>
      <FormEnd
        problem={problem}
        fields={fields}
        busy={busy}
        saveLabel="Save rule"
        onCancel={() => onClose(false)}
      />
    </form>
  );
}
