import { useState } from 'preact/hooks';
import { href, navigate, type Place } from '../router.tsx';
import { type Problem, signIn, signOutReason } from '../session.ts';
import { Field, ProblemBanner, usePageTitle } from '../ui.tsx';

export function SignInPage({ place }: { place: Place }) {
  usePageTitle('Sign in');
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const failed = await signIn(key);
    setBusy(false);
    setProblem(failed);
    if (failed === null) {
      setKey('');
      // From the sign-in page itself, on to the bundles; from a deep link, stay on the page it named.
      if (place.path === '/sign-in') navigate(href('/bundles'), { replace: true });
    }
  };
  return (
    <section class="sign-in">
      <h1>Sign in</h1>
      <p>
        Sign in with an API key of your account. The console keeps it in this browser tab only, until the tab
        is closed or you sign out; it never goes into an address.
      </p>
      {signOutReason && problem === null && <p class="notice">{signOutReason}</p>}
      <form onSubmit={submit}>
        <Field
          label="API key"
          pointer="/key"
          problem={null}
          hint="Made by an operator with: cpq keys create --account <id>"
        >
          {(props) => (
            <input
              {...props}
              type="password"
              name="apiKey"
              autocomplete="off"
              spellcheck={false}
              required
              value={key}
              onInput={(event) => setKey(event.currentTarget.value)}
            />
          )}
        </Field>
        <ProblemBanner problem={problem} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </section>
  );
}
