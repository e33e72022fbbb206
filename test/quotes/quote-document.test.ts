import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { pdfText } from '../helpers/pdf-text.ts';
import { documentOf, ok, pricedBundle } from '../helpers/quotes.ts';

const hostile = '<script>alert("x")</script> & <img src=x onerror=alert(1)>';

describeEachDatabase('quote documents', (ctx) => {
  test('the HTML page is self-contained, escapes what users wrote, and marks a draft', async () => {
    const { configuration } = await pricedBundle(ctx);
    const q = ok(
      await ctx.call('POST', '/v1/quotes', {
        body: {
          currency: 'USD',
          title: hostile,
          notes: `Line one\n${hostile}`,
          customer: { id: 'crm-7', name: 'Ada "Countess" Lovelace', email: 'ada@example.com' },
          bundles: [
            configuration({
              base: [{ productId: 'BASE-S', quantity: 2, discountPercent: 12.5 }],
              extras: [{ productId: 'EXTRA-WARRANTY', quantity: 1 }],
            }),
          ],
        },
      }),
      201,
    );
    const html = await documentOf(ctx, q.id);
    assert.equal(html.status, 200);
    assert.equal(html.type, 'text/html; charset=utf-8');
    const page = html.bytes.toString('utf8');
    assert.ok(page.startsWith('<!doctype html>'));
    for (const text of [
      `Quote ${q.number}, version 1`,
      'DRAFT',
      'Workstation &lt;Pro&gt;',
      'Small base',
      'BASE-S',
      'Base',
      'Extras',
      'EXTRA-WARRANTY',
      '$100.00',
      '12.5%',
      '$175.00',
      '$19.99',
      '$194.99',
      'Ada &quot;Countess&quot; Lovelace',
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;',
    ]) {
      assert.ok(page.includes(text), `the page shows ${text}`);
    }
    assert.ok(!page.includes('<script'), 'no script, the user’s least of all');
    assert.ok(
      !/\b(src|href)=|url\(|@import|\/\//i.test(page.replaceAll('src=x', '')),
      'nothing from any host',
    );

    ok(await ctx.call('POST', `/v1/quotes/${q.id}/submit`), 200);
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/finalize`), 200);
    const final = (await documentOf(ctx, q.id)).bytes.toString('utf8');
    assert.ok(!final.includes('DRAFT'), 'a finalized quote is no draft');
    assert.ok(final.includes('Valid until'));
  });

  test('the PDF says what the page says, read back from its text; Accept picks it', async () => {
    const { configuration } = await pricedBundle(ctx);
    const q = ok(
      await ctx.call('POST', '/v1/quotes', {
        body: {
          currency: 'USD',
          customer: { name: 'Ada Lovelace' },
          bundles: [configuration({ base: [{ productId: 'BASE-S', quantity: 2, discountPercent: 12.5 }] })],
        },
      }),
      201,
    );
    const pdf = await documentOf(ctx, q.id, 'application/pdf');
    assert.equal(pdf.status, 200);
    assert.equal(pdf.type, 'application/pdf');
    assert.equal(pdf.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    const text = (await pdfText(pdf.bytes)).join('\n');
    for (const shown of [
      `Quote ${q.number}, version 1`,
      'DRAFT',
      'Ada Lovelace',
      'Workstation <Pro>',
      'Small base',
      '$100.00',
      '12.5%',
      '$175.00',
      'Total',
    ]) {
      assert.ok(text.includes(shown), `the PDF shows ${shown}: ${text}`);
    }
    // The same quote is the same bytes, and so the same ETag.
    assert.equal((await documentOf(ctx, q.id, 'application/pdf')).etag, pdf.etag);
    assert.equal(
      (await documentOf(ctx, q.id, 'text/html, application/pdf;q=0.9')).type,
      'text/html; charset=utf-8',
    );
    assert.equal((await documentOf(ctx, q.id, 'application/pdf, text/html;q=0.5')).type, 'application/pdf');
  });

  test('a currency whose symbol is outside Latin-1 prints in the PDF (embedded font), formatted to its minor units', async () => {
    const { base, configuration } = await pricedBundle(ctx);
    ok(
      await ctx.call('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, {
        body: [{ productId: 'BASE-S', currency: 'INR', listPrice: 1234567.5 }],
      }),
      200,
    );
    const q = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'INR', bundles: [configuration()] } }),
      201,
    );
    const text = (await pdfText((await documentOf(ctx, q.id, 'application/pdf')).bytes)).join('\n');
    assert.ok(text.includes('₹1,234,567.50'), text);
    assert.ok(text.includes('₹2,469,135.00'), text);
  });

  test('thirty lines run over pages, each page of a draft marked', async () => {
    const { bundle, base } = await pricedBundle(ctx);
    const products = Array.from({ length: 30 }, (_, i) => ({
      productId: `LINE-${i}`,
      properties: { name: `Line product ${i}` },
    }));
    const option = ok(
      await ctx.call('POST', `/v1/bundles/${bundle.id}/options`, {
        body: { name: 'Many', type: 'ADD_ON', products },
      }),
      201,
    );
    ok(
      await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
        body: products.map((p, i) => ({ productId: p.productId, currency: 'USD', listPrice: 10 + i })),
      }),
      200,
    );
    const q = ok(
      await ctx.call('POST', '/v1/quotes', {
        body: {
          currency: 'USD',
          bundles: [
            {
              bundleId: bundle.id,
              options: [
                { optionId: base.id, products: [{ productId: 'BASE-S', quantity: 2 }] },
                {
                  optionId: option.id,
                  products: products.map((p) => ({ productId: p.productId, quantity: 1 })),
                },
              ],
            },
          ],
        },
      }),
      201,
    );
    assert.deepEqual(q.violations, []);
    const pages = await pdfText((await documentOf(ctx, q.id, 'application/pdf')).bytes);
    assert.ok(pages.length >= 2, `${pages.length} pages`);
    for (const page of pages) assert.ok(page.includes('DRAFT'));
    const all = pages.join('\n');
    for (let i = 0; i < 30; i++) assert.ok(all.includes(`Line product ${i}`));
    assert.ok(all.includes('$935.00'));
  });
});
