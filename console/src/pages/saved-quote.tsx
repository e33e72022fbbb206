// One saved quote: its lines, a line's discount (and unit price, where the price book lets a rep set it) edited with
// If-Match, the lifecycle actions its status allows, and its document. The document needs the key, so it is fetched
// by the typed client and handed to the browser as a file; a blob page would inherit the console's CSP and lose its
// styles.
import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { Conflict } from '../editing/conflict.tsx';
import { dateTime, keyWords, money } from '../format.ts';
import { href, Link } from '../router.tsx';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { Loading, ProblemBanner, parseNumber, useLoad, usePageTitle } from '../ui.tsx';
import { StatusBadge } from './quotes.tsx';

type SavedQuote = Schemas['SavedQuote'];
type Line = Schemas['SavedQuoteLine'];
type Loaded = { quote: SavedQuote; etag: string | null };
type Edit = { index: number; discount: string; unitPrice: string };
type Action = 'submit' | 'approve' | 'reject' | 'finalize' | 'accept' | 'decline';

const editable: readonly string[] = ['draft', 'pending_approval', 'approved'];

/** Each action, the statuses it applies in, and whether only an approver key may take it. */
const actions: { action: Action; label: string; from: string; approver?: true }[] = [
  { action: 'submit', label: 'Submit', from: 'draft' },
  { action: 'approve', label: 'Approve', from: 'pending_approval', approver: true },
  { action: 'reject', label: 'Reject', from: 'pending_approval', approver: true },
  { action: 'finalize', label: 'Finalize', from: 'approved' },
  { action: 'accept', label: 'Customer accepted', from: 'open' },
  { action: 'decline', label: 'Customer declined', from: 'open' },
];

const decisionWords: Record<Schemas['QuoteApproval']['decision'], string> = {
  pending: 'Pending',
  approved: 'Approved',
  rejected: 'Rejected',
  voided: 'Voided',
};

/**
 * Where the API says the price book lets a rep set the line's unit price, or one was set (which the rep may then
 * take back when the price book no longer allows it).
 */
function unitPriceEditable(line: Line): boolean {
  return line.allowUnitPriceEditing || line.trace.unitPriceEdited;
}

function productLabel(line: Line): string {
  return line.productName ? `${line.productName} (${line.productId})` : line.productId;
}

/** The PUT body of the quote with one line's discount and unit price changed; the rest as stored. */
function withLine(quote: SavedQuote, line: Line, discount: number, unitPrice: number | null) {
  const bundles = quote.bundles.map((bundle, b) =>
    b !== line.bundleIndex
      ? bundle
      : {
          ...bundle,
          options: bundle.options.map((option) =>
            option.optionId !== line.optionId
              ? option
              : {
                  ...option,
                  products: option.products.map((product) => {
                    if (product.productId !== line.productId) return product;
                    const { unitPrice: _, ...rest } = product;
                    return unitPrice === null
                      ? { ...rest, discountPercent: discount }
                      : { ...rest, discountPercent: discount, unitPrice };
                  }),
                },
          ),
        },
  );
  const { customer } = quote;
  return {
    currency: quote.currency,
    ...(quote.at === null ? {} : { at: quote.at }),
    title: quote.title,
    notes: quote.notes,
    customer: (customer.id ?? customer.name ?? customer.email) ? customer : null,
    expiresAt: quote.expiresAt,
    bundles,
  };
}

async function readQuote(session: Session, quoteId: string): Promise<Loaded> {
  const { data, etag } = await call(
    session.api.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId } } }),
  );
  return { quote: data, etag };
}

/** Saves a file the browser was handed as a blob. */
function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function SavedQuotePage({ quoteId, session }: { quoteId: string; session: Session }) {
  const loaded = useLoad(() => readQuote(session, quoteId), [quoteId]);
  const [fresh, setFresh] = useState<Loaded | null>(null);
  const [edit, setEdit] = useState<Edit | null>(null);
  const [conflict, setConflict] = useState<Loaded | null>(null);
  const [stale, setStale] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [comment, setComment] = useState('');
  const current = fresh ?? loaded.data ?? null;
  usePageTitle(current ? `Quote ${current.quote.number}` : 'Quote');
  if (current === null)
    return loaded.problem ? <ProblemBanner problem={loaded.problem} /> : <Loading what="the quote" />;
  const { quote, etag } = current;
  const canEdit = !session.readOnly && editable.includes(quote.status);
  const ifMatch = (tag: string | null) => (tag ? { 'if-match': tag } : {});

  const reload = async () => {
    setStale(false);
    setProblem(null);
    try {
      setFresh(await readQuote(session, quoteId));
    } catch (error) {
      setProblem(problemOf(error));
    }
  };

  const saveLine = async (over?: Loaded) => {
    if (edit === null) return;
    const base = over ?? current;
    const line = base.quote.lines[edit.index];
    const discount = parseNumber(edit.discount) ?? 0;
    const unitPrice = parseNumber(edit.unitPrice);
    if (line === undefined) return;
    if (Number.isNaN(discount) || Number.isNaN(unitPrice)) {
      setProblem(problemOf(new Error('The discount and the unit price must be numbers.')));
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      const saved = await call(
        session.api.PUT('/v1/quotes/{quoteId}', {
          params: { path: { quoteId }, header: ifMatch(base.etag) },
          body: withLine(base.quote, line, discount, unitPriceEditable(line) ? unitPrice : null),
        }),
      );
      setFresh({ quote: saved.data, etag: saved.etag });
      setEdit(null);
    } catch (error) {
      const found = problemOf(error);
      if (found.status === 412) setConflict(await readQuote(session, quoteId).catch(() => null));
      else setProblem(found);
    } finally {
      setBusy(false);
    }
  };

  const act = async (action: Action) => {
    setBusy(true);
    setProblem(null);
    const params = { params: { path: { quoteId }, header: ifMatch(etag) } };
    const decision = { ...params, body: comment.trim() ? { comment: comment.trim() } : {} };
    try {
      const done = await call(
        action === 'approve'
          ? session.api.POST('/v1/quotes/{quoteId}/approve', decision)
          : action === 'reject'
            ? session.api.POST('/v1/quotes/{quoteId}/reject', decision)
            : session.api.POST(`/v1/quotes/{quoteId}/${action}`, params),
      );
      setFresh({ quote: done.data, etag: done.etag });
      setComment('');
    } catch (error) {
      const found = problemOf(error);
      if (found.status === 412) setStale(true);
      else setProblem(found);
    } finally {
      setBusy(false);
    }
  };

  const download = async (kind: 'html' | 'pdf') => {
    setProblem(null);
    try {
      const { data } = await call(
        session.api.GET('/v1/quotes/{quoteId}/document', {
          params: { path: { quoteId } },
          headers: { accept: kind === 'pdf' ? 'application/pdf' : 'text/html' },
          parseAs: 'blob',
        }),
      );
      saveFile(data as unknown as Blob, `${quote.number}-v${quote.version}.${kind}`);
    } catch (error) {
      setProblem(problemOf(error));
    }
  };

  const shown = actions.filter(
    (a) => !session.readOnly && a.from === quote.status && (!a.approver || session.approver),
  );
  const editedLine = edit === null ? undefined : quote.lines[edit.index];

  return (
    <section class="saved-quote">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link to={href('/quotes')}>Quotes</Link> / <span aria-current="page">{quote.number}</span>
      </nav>
      <h1>
        Quote {quote.number} <span class="muted">v{quote.version}</span>
      </h1>
      <p class="quote-head">
        <StatusBadge status={quote.status} />
        {quote.title && <span>{quote.title}</span>}
        {(quote.customer.name ?? quote.customer.id) && (
          <span>For {quote.customer.name ?? quote.customer.id}</span>
        )}
        <span class="muted small">Changed {dateTime(quote.updatedAt)}</span>
      </p>
      {stale && (
        <div class="conflict" role="alert" data-status="412">
          <strong>Someone else changed this quote since you read it.</strong>
          <p>Nothing was done. Read it again to see what changed, then decide.</p>
          <div class="actions">
            <button type="button" onClick={reload}>
              Reload the quote
            </button>
          </div>
        </div>
      )}
      <ProblemBanner problem={problem} />
      {quote.violations.length > 0 && (
        <div class="notice">
          <strong>To fix before it can be submitted:</strong>
          <ul class="violations">
            {quote.violations.map((v) => (
              <li key={`${v.pointer}:${v.message}`}>{v.message}</li>
            ))}
          </ul>
        </div>
      )}
      <div class="table-wrap">
        <table class="lines saved">
          <caption class="visually-hidden">
            Lines of {quote.number}, in {quote.currency}
          </caption>
          <thead>
            <tr>
              <th scope="col">Product</th>
              <th scope="col" class="num">
                Qty
              </th>
              <th scope="col" class="num">
                Unit
              </th>
              <th scope="col" class="num">
                <span class="wide-only">Discount</span>
                <span class="phone-only">Disc.</span>
              </th>
              <th scope="col" class="num">
                Total
              </th>
              {canEdit && (
                <th scope="col">
                  <span class="visually-hidden">Edit</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {quote.lines.map((line, index) => (
              <tr key={`${line.bundleIndex}:${line.optionId}:${line.productId}`} data-line={line.productId}>
                <th scope="row">
                  {line.productName ?? <span class="mono">{line.productId}</span>}
                  <div class="small muted">
                    {line.optionName}
                    {line.productName && (
                      <>
                        {' '}
                        · <span class="mono nowrap">{line.productId}</span>
                      </>
                    )}
                  </div>
                </th>
                <td class="num">{line.quantity}</td>
                <td class="num">{money(line.unitPrice, quote.currency)}</td>
                <td class="num" data-discount>
                  {line.discountPercent === 0 ? '—' : `${line.discountPercent}%`}
                </td>
                <td class="num">{money(line.total, quote.currency)}</td>
                {canEdit && (
                  <td>
                    <button
                      type="button"
                      class="link"
                      onClick={() => {
                        setConflict(null);
                        setEdit({
                          index,
                          discount: line.discountPercent === 0 ? '' : String(line.discountPercent),
                          unitPrice: line.trace.unitPriceEdited ? String(line.unitPrice) : '',
                        });
                      }}
                    >
                      Edit<span class="visually-hidden"> {productLabel(line)}</span>
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row" colSpan={4}>
                List total
              </th>
              <td class="num">{money(quote.listTotal, quote.currency)}</td>
              {canEdit && <td />}
            </tr>
            <tr>
              <th scope="row" colSpan={4}>
                Discounts
              </th>
              <td class="num">{money(quote.discountTotal, quote.currency)}</td>
              {canEdit && <td />}
            </tr>
            <tr>
              <th scope="row" colSpan={4}>
                Total
              </th>
              <td class="num total" data-total>
                {money(quote.total, quote.currency)}
              </td>
              {canEdit && <td />}
            </tr>
          </tfoot>
        </table>
      </div>
      {canEdit && edit !== null && editedLine && (
        <form
          class="editor"
          aria-label={`Price of ${productLabel(editedLine)}`}
          onSubmit={(event) => {
            event.preventDefault();
            saveLine();
          }}
        >
          <h2>Price of {productLabel(editedLine)}</h2>
          {conflict && (
            <Conflict
              what="this quote"
              onTake={() => {
                setFresh(conflict);
                setConflict(null);
                setEdit(null);
              }}
              onOverwrite={() => {
                const over = conflict;
                setFresh(over);
                setConflict(null);
                saveLine(over);
              }}
            >
              <p>
                Title {conflict.quote.title ?? 'none'}, status {conflict.quote.status}, total{' '}
                {money(conflict.quote.total, conflict.quote.currency)}
                {conflict.quote.lines[edit.index]
                  ? `; this line at ${conflict.quote.lines[edit.index]?.discountPercent}% off`
                  : ''}
                .
              </p>
            </Conflict>
          )}
          <div class="row">
            <div class="field">
              <label for="line-discount">Discount %</label>
              <input
                id="line-discount"
                inputMode="decimal"
                placeholder="0"
                value={edit.discount}
                onInput={(e) => setEdit({ ...edit, discount: e.currentTarget.value })}
              />
            </div>
            {unitPriceEditable(editedLine) && (
              <div class="field">
                <label for="line-unit-price">Unit price ({quote.currency})</label>
                <input
                  id="line-unit-price"
                  inputMode="decimal"
                  placeholder={String(editedLine.trace.priceBookUnitPrice)}
                  aria-describedby="line-unit-price-hint"
                  value={edit.unitPrice}
                  onInput={(e) => setEdit({ ...edit, unitPrice: e.currentTarget.value })}
                />
                <small id="line-unit-price-hint" class="hint">
                  The price book’s: {money(editedLine.trace.priceBookUnitPrice, quote.currency)}; leave empty
                  to use it
                </small>
              </div>
            )}
          </div>
          <div class="actions">
            <button type="submit" disabled={busy}>
              {busy ? 'Saving…' : 'Save the line'}
            </button>
            <button type="button" class="secondary" onClick={() => setEdit(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {quote.approvals.length > 0 && (
        <section aria-labelledby="approvals-heading">
          <h2 id="approvals-heading">Approvals</h2>
          <ul class="plain approvals">
            {quote.approvals.map((a) => (
              <li key={`${a.policyId}:${a.quoteVersion}:${a.at}`} data-decision={a.decision}>
                <strong>{decisionWords[a.decision]}</strong> · {a.reason}
                {a.keyId ? ` · by ${keyWords(a.keyName, a.keyId)}` : ''}
                {a.comment ? ` · “${a.comment}”` : ''} <span class="muted small">{dateTime(a.at)}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {shown.length > 0 && (
        <section aria-labelledby="actions-heading">
          <h2 id="actions-heading">Next step</h2>
          {shown.some((a) => a.approver) && (
            <div class="field">
              <label for="decision-comment">Comment (optional)</label>
              <input
                id="decision-comment"
                value={comment}
                onInput={(e) => setComment(e.currentTarget.value)}
              />
            </div>
          )}
          <div class="actions">
            {shown.map((a) => (
              <button
                key={a.action}
                type="button"
                class={a.action === 'reject' || a.action === 'decline' ? 'secondary' : undefined}
                disabled={busy}
                onClick={() => act(a.action)}
              >
                {a.label}
              </button>
            ))}
          </div>
        </section>
      )}
      <section aria-labelledby="document-heading">
        <h2 id="document-heading">Document</h2>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => download('html')}>
            Download the document (HTML)
          </button>
          <button type="button" class="secondary" onClick={() => download('pdf')}>
            Download the PDF
          </button>
        </div>
      </section>
    </section>
  );
}
