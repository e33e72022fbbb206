import { useState } from 'preact/hooks';
import { NewBundleForm } from '../editing/authoring.tsx';
import { dateTime } from '../format.ts';
import { href, Link, navigate, type Place } from '../router.tsx';
import { call, type Session } from '../session.ts';
import { Loading, ProblemBanner, useLoad, usePageTitle } from '../ui.tsx';

const pageSize = 25;

export function BundlesPage({ place, session }: { place: Place; session: Session }) {
  usePageTitle('Bundles');
  const active = place.query.get('active') ?? '';
  const product = place.query.get('product') ?? '';
  const pageKey = place.query.get('page') ?? '';
  const [search, setSearch] = useState(product);
  const [activeChoice, setActiveChoice] = useState(active);
  const [making, setMaking] = useState(false);
  const loaded = useLoad(
    async () =>
      (
        await call(
          session.api.GET('/v1/bundles', {
            params: {
              query: {
                limit: pageSize,
                nextKey: pageKey || undefined,
                isActive: active === '' ? undefined : active === 'true',
                productId: product || undefined,
              },
            },
          }),
        )
      ).data,
    [active, product, pageKey],
  );
  const submit = (event: Event) => {
    event.preventDefault();
    navigate(href('/bundles', { active: activeChoice, product: search.trim() }));
  };
  const bundles = loaded.data?.bundles;
  return (
    <section>
      <div class="section-head">
        <h1>Bundles</h1>
        {!session.readOnly && !making && (
          <button type="button" onClick={() => setMaking(true)}>
            New bundle
          </button>
        )}
      </div>
      {making && (
        <NewBundleForm
          session={session}
          onMade={(bundleId) => navigate(href(`/bundles/${encodeURIComponent(bundleId)}`))}
        />
      )}
      <form class="filters" onSubmit={submit}>
        <div class="field">
          <label for="bundle-search">Header product</label>
          <input
            id="bundle-search"
            type="search"
            placeholder="Exact CRM product id"
            value={search}
            onInput={(event) => setSearch(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="bundle-active">Status</label>
          <select
            id="bundle-active"
            value={activeChoice}
            onChange={(event) => setActiveChoice(event.currentTarget.value)}
          >
            <option value="">All</option>
            <option value="true">Active</option>
            <option value="false">Inactive</option>
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <ProblemBanner problem={loaded.problem} />
      {bundles === undefined ? (
        loaded.problem === null && <Loading what="bundles" />
      ) : bundles.length === 0 ? (
        <p class="empty">No bundle matches{product ? ` the header product ${product}` : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="bundles">
            <caption class="visually-hidden">Bundles, in creation order</caption>
            <thead>
              <tr>
                <th scope="col">Header product</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Included options
                </th>
                <th scope="col" class="num">
                  Add-on options
                </th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {bundles.map((bundle) => (
                <tr key={bundle.id}>
                  <th scope="row">
                    <Link to={href(`/bundles/${encodeURIComponent(bundle.id)}`)}>
                      {bundle.header.productId}
                    </Link>
                    {bundle.header.properties.name && (
                      <span class="muted"> · {bundle.header.properties.name}</span>
                    )}
                    {bundle.clonedBundleTempName && (
                      <span class="muted"> · {bundle.clonedBundleTempName}</span>
                    )}
                    <div class="muted mono small">{bundle.id}</div>
                  </th>
                  <td>
                    <span class={bundle.isActive ? 'badge ok' : 'badge'}>
                      {bundle.isActive ? 'Active' : 'Inactive'}
                    </span>
                  </td>
                  <td class="num">{bundle.includedOptionsCount}</td>
                  <td class="num">{bundle.addOnOptionsCount}</td>
                  <td>{dateTime(bundle.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        {pageKey && <Link to={href('/bundles', { active, product })}>First page</Link>}
        {loaded.data?.nextKey && (
          <Link to={href('/bundles', { active, product, page: loaded.data.nextKey })} rel="next">
            Next page
          </Link>
        )}
      </nav>
    </section>
  );
}
