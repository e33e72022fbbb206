// The signed-in key. It lives in sessionStorage only (gone when the tab closes), is sent in the x-api-key header by
// the typed client, and never appears in a URL, a log or the page.
import { type CpqClient, createClient, type Schemas } from '@cpq/client';

export type Problem = Schemas['Problem'];

export interface Session {
  api: CpqClient;
  keyId: string;
  accountId: string;
  readOnly: boolean;
  /** May approve and reject quotes (cpq keys create --approver). */
  approver: boolean;
}

const storageKey = 'cpq.console.apiKey';

let current: Session | null = null;
const listeners = new Set<() => void>();

export function session(): Session | null {
  return current;
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function set(next: Session | null): void {
  current = next;
  for (const listener of listeners) listener();
}

/** Why the last session ended, shown on the sign-in page. */
export let signOutReason: string | null = null;

export function signOut(reason: string | null = null): void {
  sessionStorage.removeItem(storageKey);
  signOutReason = reason;
  set(null);
}

/** A problem the console makes itself, in the shape of the service's, for failures that never reached it. */
export function localProblem(title: string, detail: string, status = 0): Problem {
  return {
    type: 'about:blank',
    title,
    status,
    detail,
    instance: location.pathname,
    code: 'bad_request',
    requestId: '',
  };
}

export class ProblemError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail);
    this.problem = problem;
  }
}

export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'status' in value && 'code' in value;
}

/** The problem a failure stands for. */
export function problemOf(error: unknown): Problem {
  if (error instanceof ProblemError) return error.problem;
  return localProblem(
    'The service could not be reached',
    error instanceof Error ? error.message : String(error),
  );
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a call, with the ETag of its answer; a problem is thrown as ProblemError. A 401 ends the session:
 * the key was revoked while the page was open.
 */
export async function call<T>(pending: Promise<Answer<T>>): Promise<{ data: T; etag: string | null }> {
  let answer: Answer<T>;
  try {
    answer = await pending;
  } catch (error) {
    throw new ProblemError(problemOf(error));
  }
  const { data, error, response } = answer;
  if (response.ok) return { data: data as T, etag: response.headers.get('etag') };
  const problem = isProblem(error)
    ? error
    : localProblem(`The service answered ${response.status}`, response.statusText, response.status);
  if (response.status === 401) signOut('The key is no longer accepted. Sign in again.');
  throw new ProblemError(problem);
}

function clientFor(apiKey: string): CpqClient {
  // Same origin; no-cache makes the browser revalidate each read with its ETag, so an edit shows at once.
  return createClient({ baseUrl: '', apiKey, cache: 'no-cache' });
}

async function open(apiKey: string): Promise<Session> {
  const api = clientFor(apiKey);
  const { data } = await call(api.GET('/v1/keys/current'));
  return {
    api,
    keyId: data.keyId,
    accountId: data.accountId,
    readOnly: data.readOnly,
    approver: data.approver,
  };
}

/** Signs in with a key: the service must accept it. Answers the problem when it does not. */
export async function signIn(apiKey: string): Promise<Problem | null> {
  try {
    const next = await open(apiKey.trim());
    sessionStorage.setItem(storageKey, apiKey.trim());
    signOutReason = null;
    set(next);
    return null;
  } catch (error) {
    return problemOf(error);
  }
}

/** The session of this tab, from the key it signed in with before a reload; null when there is none. */
export async function restore(): Promise<void> {
  const apiKey = sessionStorage.getItem(storageKey);
  if (apiKey === null) return;
  try {
    set(await open(apiKey));
  } catch (error) {
    const problem = problemOf(error);
    if (problem.status !== 401) signOut(`Could not sign in again: ${problem.detail}`);
  }
}
