// An option's settings: name, type, how many products it takes, its default product, its description.
import type { Schemas } from '@cpq/client';
import { useEffect, useState } from 'preact/hooks';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { Field, Loading, numberText, ProblemBanner, parseNumber } from '../ui.tsx';
import { Conflict, checkedLocally, FormEnd } from './conflict.tsx';

type ProblemItem = Schemas['ProblemItem'];

interface OptionForm {
  name: string;
  description: string;
  type: 'INCLUDED' | 'ADD_ON';
  minCount: string;
  maxCount: string;
  defaultOptionProductId: string;
}

interface OptionState {
  form: OptionForm;
  products: Schemas['OptionProduct'][];
  etag: string | null;
}

async function readOption(session: Session, bundleId: string, optionId: string): Promise<OptionState> {
  const { data, etag } = await call(
    session.api.GET('/v1/bundles/{bundleId}/options/{optionId}', {
      params: { path: { bundleId, optionId } },
    }),
  );
  return {
    form: {
      name: data.name,
      description: data.description ?? '',
      type: data.type,
      minCount: numberText(data.configuration.minCount),
      maxCount: numberText(data.configuration.maxCount),
      defaultOptionProductId: data.configuration.defaultOptionProductId ?? '',
    },
    products: data.products,
    etag,
  };
}

export function OptionEditor({
  session,
  bundleId,
  optionId,
  onClose,
}: {
  session: Session;
  bundleId: string;
  optionId: string;
  onClose: (saved: boolean) => void;
}) {
  const [state, setState] = useState<OptionState | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [conflict, setConflict] = useState<OptionState | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    readOption(session, bundleId, optionId).then(setState, (error) => setProblem(problemOf(error)));
  }, []);
  if (state === null) return problem ? <ProblemBanner problem={problem} /> : <Loading what="the option" />;
  const { form } = state;
  const set = (change: Partial<OptionForm>) => setState({ ...state, form: { ...form, ...change } });
  const save = async (over?: OptionState) => {
    const current = over ?? state;
    const local: ProblemItem[] = [];
    const count = (text: string, pointer: string) => {
      const value = parseNumber(text);
      if (Number.isNaN(value))
        local.push({ code: 'invalid_type', in: 'body', pointer, message: 'must be a number' });
      return value;
    };
    const minCount = count(current.form.minCount, '/configuration/minCount');
    const maxCount = count(current.form.maxCount, '/configuration/maxCount');
    if (local.length > 0) return setProblem(checkedLocally(local));
    setBusy(true);
    try {
      await call(
        session.api.PUT('/v1/bundles/{bundleId}/options/{optionId}', {
          params: {
            path: { bundleId, optionId },
            header: current.etag ? { 'if-match': current.etag } : {},
          },
          body: {
            name: current.form.name,
            description: current.form.description.trim() === '' ? null : current.form.description,
            type: current.form.type,
            configuration: {
              minCount,
              maxCount,
              defaultOptionProductId: current.form.defaultOptionProductId || null,
            },
          },
        }),
      );
      onClose(true);
    } catch (error) {
      const found = problemOf(error);
      if (found.status === 412) {
        setProblem(null);
        setConflict(await readOption(session, bundleId, optionId).catch(() => null));
      } else setProblem(found);
    } finally {
      setBusy(false);
    }
  };
  const fields = [
    '/name',
    '/description',
    '/type',
    '/configuration/minCount',
    '/configuration/maxCount',
    '/configuration/defaultOptionProductId',
  ];
  return (
    <form
      class="editor"
      aria-label="Option settings"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <h3>Settings of {form.name}</h3>
      {conflict && (
        <Conflict
          what="this option"
          onTake={() => {
            setState(conflict);
            setConflict(null);
          }}
          onOverwrite={() => {
            const over = { ...state, etag: conflict.etag };
            setState(over);
            setConflict(null);
            save(over);
          }}
        >
          <ul class="plain">
            <li>Name: {conflict.form.name}</li>
            <li>Type: {conflict.form.type}</li>
            <li>
              Products chosen: {conflict.form.minCount || 'no minimum'} to{' '}
              {conflict.form.maxCount || 'no maximum'}
            </li>
          </ul>
        </Conflict>
      )}
      <div class="row">
        <Field label="Name" pointer="/name" problem={problem}>
          {(props) => (
            <input {...props} value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Type" pointer="/type" problem={problem}>
          {(props) => (
            <select
              {...props}
              value={form.type}
              onChange={(e) => set({ type: e.currentTarget.value as OptionForm['type'] })}
            >
              <option value="INCLUDED">Included (required in a quote)</option>
              <option value="ADD_ON">Add-on (optional)</option>
            </select>
          )}
        </Field>
      </div>
      <div class="row">
        <Field
          label="Fewest products"
          pointer="/configuration/minCount"
          problem={problem}
          hint="Empty: no minimum"
        >
          {(props) => (
            <input
              {...props}
              inputMode="numeric"
              value={form.minCount}
              onInput={(e) => set({ minCount: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field
          label="Most products"
          pointer="/configuration/maxCount"
          problem={problem}
          hint="Empty: no maximum"
        >
          {(props) => (
            <input
              {...props}
              inputMode="numeric"
              value={form.maxCount}
              onInput={(e) => set({ maxCount: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Default product" pointer="/configuration/defaultOptionProductId" problem={problem}>
          {(props) => (
            <select
              {...props}
              value={form.defaultOptionProductId}
              onChange={(e) => set({ defaultOptionProductId: e.currentTarget.value })}
            >
              <option value="">None</option>
              {state.products.map((product) => (
                <option key={product.id} value={product.id}>
                  {product.productId}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Description" pointer="/description" problem={problem}>
        {(props) => (
          <textarea
            {...props}
            rows={2}
            value={form.description}
            onInput={(e) => set({ description: e.currentTarget.value })}
          />
        )}
      </Field>
      <FormEnd
        problem={problem}
        fields={fields}
        busy={busy}
        saveLabel="Save settings"
        onCancel={() => onClose(false)}
      />
    </form>
  );
}
