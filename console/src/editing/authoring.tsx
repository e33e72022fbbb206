// Building a catalogue: a new bundle, a new option, products added to an option. Each is one small form whose
// problems show at their fields; clones and deletes are single requests made from the bundle page.
import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { Field, ProblemBanner } from '../ui.tsx';

/** Properties with a name, when one was typed: the console shows a product by its name property. */
function named(name: string): Record<string, string> {
  return name.trim() === '' ? {} : { name: name.trim() };
}

function useSubmit(work: () => Promise<void>) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await work();
      setProblem(null);
    } catch (error) {
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };
  return { problem, busy, submit };
}

export function NewBundleForm({ session, onMade }: { session: Session; onMade: (bundleId: string) => void }) {
  const [productId, setProductId] = useState('');
  const [name, setName] = useState('');
  const { problem, busy, submit } = useSubmit(async () => {
    const { data } = await call(
      session.api.POST('/v1/bundles', {
        body: { header: { productId: productId.trim(), properties: named(name) }, isActive: false },
      }),
    );
    onMade(data.id);
  });
  const fields = ['/header/productId', '/header/properties/name'];
  return (
    <form class="editor inline-form" onSubmit={submit} aria-label="New bundle">
      <h2>New bundle</h2>
      <Field label="Header product (CRM product id)" pointer="/header/productId" problem={problem}>
        {(props) => (
          <input {...props} value={productId} onInput={(e) => setProductId(e.currentTarget.value)} />
        )}
      </Field>
      <Field label="Name (optional)" pointer="/header/properties/name" problem={problem}>
        {(props) => <input {...props} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <ProblemBanner problem={problem} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Create the bundle
        </button>
      </div>
      <p class="muted small">A new bundle starts inactive: activate it once its options are ready.</p>
    </form>
  );
}

export function NewOptionForm({
  session,
  bundleId,
  onMade,
  onCancel,
}: {
  session: Session;
  bundleId: string;
  onMade: () => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [type, setType] = useState<'INCLUDED' | 'ADD_ON'>('ADD_ON');
  const { problem, busy, submit } = useSubmit(async () => {
    await call(
      session.api.POST('/v1/bundles/{bundleId}/options', {
        params: { path: { bundleId } },
        body: { name: name.trim(), type },
      }),
    );
    onMade();
  });
  return (
    <form class="editor" onSubmit={submit} aria-label="New option">
      <h3>New option</h3>
      <Field label="Name" pointer="/name" problem={problem}>
        {(props) => <input {...props} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Field label="Kind" pointer="/type" problem={problem}>
        {(props) => (
          <select
            {...props}
            value={type}
            onChange={(e) => setType(e.currentTarget.value as 'INCLUDED' | 'ADD_ON')}
          >
            <option value="ADD_ON">Add-on: the customer may choose it</option>
            <option value="INCLUDED">Included: every configuration has it</option>
          </select>
        )}
      </Field>
      <ProblemBanner problem={problem} fields={['/name', '/type']} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Create the option
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function AddProductForm({
  session,
  bundleId,
  option,
  onAdded,
}: {
  session: Session;
  bundleId: string;
  option: Pick<Schemas['BundleOption'], 'id' | 'name'>;
  onAdded: () => void;
}) {
  const [productId, setProductId] = useState('');
  const [name, setName] = useState('');
  const { problem, busy, submit } = useSubmit(async () => {
    await call(
      session.api.POST('/v1/bundles/{bundleId}/options/{optionId}/products', {
        params: { path: { bundleId, optionId: option.id } },
        body: [{ productId: productId.trim(), properties: named(name) }],
      }),
    );
    setProductId('');
    setName('');
    onAdded();
  });
  const fields = ['/0/productId', '/0/properties/name'];
  return (
    <form class="add-product" onSubmit={submit} aria-label={`Add a product to ${option.name}`}>
      <Field label="CRM product id" pointer="/0/productId" problem={problem}>
        {(props) => (
          <input {...props} value={productId} onInput={(e) => setProductId(e.currentTarget.value)} />
        )}
      </Field>
      <Field label="Name (optional)" pointer="/0/properties/name" problem={problem}>
        {(props) => <input {...props} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <div class="actions">
        <button type="submit" class="secondary" disabled={busy}>
          Add the product<span class="visually-hidden"> to {option.name}</span>
        </button>
      </div>
      <ProblemBanner problem={problem} fields={fields} />
    </form>
  );
}
