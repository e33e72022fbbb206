// The console's authoring and bulk pricing in a real browser (chromium, headless), on a desktop window and on a
// 390 px phone: a catalogue built from nothing (bundle, options, products, clones, confirmed deletes), a price
// book's prices changed by a percent (preview, then applied), and a CSV import previewed with a bad row named by
// its line, then imported; a saved quote from the builder to its finalized document, approved by a second key.
// axe-core on every state; no page wider than the phone.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { seedDemo } from '../../src/demo/seed-demo.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { launchChromium, screenshot, seriousViolations } from './browser.ts';

const desktop = { width: 1280, height: 860 };
const phone = { width: 390, height: 844 };

describeEachDatabase('Authoring and bulk pricing in the console', (ctx) => {
  let baseUrl: string;
  let browser: Browser;
  let demoBundleId: string;
  const pages: Page[] = [];
  const problems: string[] = [];

  const url = (path: string) => `${baseUrl}/console${path}`;

  async function open(viewport: { width: number; height: number }, key = ctx.key): Promise<Page> {
    const context = await browser.newContext({ viewport, acceptDownloads: true });
    const page = await context.newPage();
    page.on('request', (request) => {
      if (!request.url().startsWith(`${baseUrl}/`) && !/^(data|blob):/.test(request.url())) {
        problems.push(`request to another host: ${request.url()}`);
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(url('/sign-in'));
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Bundles', level: 1 }).waitFor();
    pages.push(page);
    return page;
  }

  /** axe finds nothing serious, the page is no wider than its window, and a screenshot is kept. */
  async function check(page: Page, name: string, shown?: Locator): Promise<void> {
    assert.deepEqual(await seriousViolations(page), [], `axe on ${name}`);
    const { width } = page.viewportSize() ?? desktop;
    const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
    // The outermost elements past the window's right edge, to say what makes it wide.
    const wide = await page.evaluate(`(() => {
      const past = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width});
      return past.filter((e) => !past.includes(e.parentElement)).map((e) => e.tagName + '.' + e.className).join(', ');
    })()`);
    assert.ok(scrollWidth <= width, `${name} is ${scrollWidth} px wide in a ${width} px window: ${wide}`);
    await screenshot(shown ?? page, `${name}-${width}`);
  }

  before(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    demoBundleId = (await seedDemo(ctx.db, 'acme')).bundleId;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    assert.deepEqual(problems, []);
  });

  for (const viewport of [desktop, phone]) {
    test(`builds a catalogue: a bundle, options, products, clones and confirmed deletes (${viewport.width} px)`, async () => {
      const page = await open(viewport);
      const header = `NEW-KIT-${viewport.width}`;
      await page.getByRole('button', { name: 'New bundle' }).click();
      await page.getByLabel('Header product (CRM product id)').fill(header);
      await page.getByLabel('Name (optional)').fill('Starter kit');
      await check(page, 'new-bundle');
      await page.getByRole('button', { name: 'Create the bundle' }).click();
      await page.getByRole('heading', { name: new RegExp(header), level: 1 }).waitFor();

      await page.getByRole('button', { name: 'New option' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Memory');
      await page.getByLabel('Kind').selectOption('INCLUDED');
      await page.getByRole('button', { name: 'Create the option' }).click();
      const memory = page.locator('section.option', { has: page.getByRole('heading', { name: /^Memory/ }) });
      await memory.waitFor();

      const add = memory.getByRole('form', { name: 'Add a product to Memory' });
      await add.getByLabel('CRM product id').fill('RAM-16');
      await add.getByLabel('Name (optional)').fill('16 GB memory');
      await add.getByRole('button', { name: /Add the product/ }).click();
      await memory.locator('tr[data-product="RAM-16"] th', { hasText: '16 GB memory' }).waitFor();
      await add.getByLabel('CRM product id').fill('RAM-32');
      await add.getByRole('button', { name: /Add the product/ }).click();
      await memory.locator('tr[data-product="RAM-32"]').waitFor();
      // The same product twice is refused, in words, at its field.
      await add.getByLabel('CRM product id').fill('RAM-32');
      await add.getByRole('button', { name: /Add the product/ }).click();
      await add.locator('.problem[data-status="409"]').waitFor();
      await check(page, 'authoring');

      await memory.getByRole('button', { name: 'Clone Memory' }).click();
      const copy = page.locator('section.option', {
        has: page.getByRole('heading', { name: /^Memory \(copy\)/ }),
      });
      await copy.locator('tr[data-product="RAM-16"] th', { hasText: '16 GB memory' }).waitFor();

      await copy.getByRole('button', { name: 'Delete the option Memory (copy)' }).click();
      const question = copy.getByRole('alertdialog', { name: 'Delete the option Memory (copy)?' });
      await question.waitFor();
      await check(page, 'confirm-delete');
      await question.getByRole('button', { name: 'Keep it' }).click();
      await copy.getByRole('button', { name: 'Delete the option Memory (copy)' }).click();
      await copy.getByRole('button', { name: 'Yes, delete' }).click();
      await copy.waitFor({ state: 'detached' });

      await memory.getByRole('button', { name: 'Remove RAM-32 from Memory' }).click();
      await memory.getByRole('button', { name: 'Yes, delete' }).click();
      await memory.locator('tr[data-product="RAM-32"]').waitFor({ state: 'detached' });
      assert.equal(await memory.locator('tbody tr').count(), 1);

      await page.getByRole('button', { name: 'Clone the bundle' }).click();
      await page.getByText(`Copy of`).first().waitFor();
      const copyId = new URL(page.url()).pathname.split('/').at(-1) as string;
      assert.equal((await ctx.call('GET', `/v1/bundles/${copyId}`)).body.header.productId, header);
      await page.getByRole('button', { name: `Delete the bundle Starter kit` }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await page.waitForURL(/\/console\/bundles$/);
      assert.equal((await ctx.call('GET', `/v1/bundles/${copyId}`)).status, 404);
    });
  }

  test('clones and deletes a rule of the demo bundle', async () => {
    const page = await open(desktop);
    await page.goto(url(`/bundles/${demoBundleId}`));
    const rules = page.locator('.rule-list > li');
    await rules.first().waitFor();
    const before = await rules.count();
    const name = (await rules.first().locator('strong').textContent()) as string;
    await rules
      .first()
      .getByRole('button', { name: `Clone rule ${name}` })
      .click();
    await page.locator('.rule-list > li', { hasText: `${name} (copy)` }).waitFor();
    assert.equal(await rules.count(), before + 1);
    const copy = page.locator('.rule-list > li', { hasText: `${name} (copy)` });
    await copy.getByRole('button', { name: `Delete the rule ${name} (copy)` }).click();
    await copy.getByRole('button', { name: 'Yes, delete' }).click();
    await copy.waitFor({ state: 'detached' });
    assert.equal(await rules.count(), before);
  });

  for (const viewport of [desktop, phone]) {
    test(`changes a price book by a percent: preview, then apply (${viewport.width} px)`, async () => {
      const page = await open(viewport);
      const { bundleId } = await seedDemo(ctx.db, 'acme');
      await page.goto(url(`/bundles/${bundleId}`));
      const price = page.locator('tr[data-product="DEMO-CPU-8C"] td[data-currency="USD"] .list');
      const was = Number(((await price.textContent()) as string).replace(/[$,]/g, ''));
      await page.getByRole('button', { name: 'Change prices of Processor' }).click();
      const tools = page.getByRole('region', { name: 'Change the prices of Processor' });
      await tools.getByLabel('Percent (negative lowers)').fill('abc');
      await tools.getByRole('button', { name: 'Preview the change' }).click();
      await tools.locator('.field.invalid', { hasText: 'write a percent' }).waitFor();
      await tools.getByLabel('Percent (negative lowers)').fill('10');
      await tools.getByRole('button', { name: 'Preview the change' }).click();
      const preview = tools.locator('.preview[data-preview="bulk"]');
      await preview.waitFor();
      const row = preview.locator('tr[data-product="DEMO-CPU-8C"]', { hasText: 'USD' });
      const expected = (Math.round(was * 110) / 100).toFixed(2);
      assert.match(
        (await row.textContent()) as string,
        new RegExp(`list price \\$${was.toFixed(2)} → \\$${expected}`),
      );
      assert.equal(await price.textContent(), `$${was.toFixed(2)}`, 'a preview changes nothing');
      await check(page, 'bulk-preview', tools);
      await tools.getByRole('button', { name: 'Apply the change' }).click();
      await tools.getByText(/^Applied: \d+ prices changed\.$/).waitFor();
      await page
        .locator('tr[data-product="DEMO-CPU-8C"] td[data-currency="USD"] .list', { hasText: `$${expected}` })
        .waitFor();
    });

    test(`imports a CSV: a bad row named by its line, then the good file (${viewport.width} px)`, async () => {
      const page = await open(viewport);
      const { bundleId } = await seedDemo(ctx.db, 'acme');
      await page.goto(url(`/bundles/${bundleId}`));
      await page.getByRole('button', { name: 'Change prices of Processor' }).click();
      const tools = page.getByRole('region', { name: 'Change the prices of Processor' });
      const downloading = page.waitForEvent('download');
      await tools.getByRole('button', { name: 'Download CSV' }).click();
      const download = await downloading;
      assert.equal(download.suggestedFilename(), 'Processor prices.csv');
      const exported = await new Promise<string>((resolve, reject) => {
        download.createReadStream().then((stream) => {
          let text = '';
          stream.on('data', (chunk) => {
            text += chunk;
          });
          stream.on('end', () => resolve(text));
          stream.on('error', reject);
        }, reject);
      });
      assert.match(
        exported,
        /^productId,name,currency,standardPrice,listPrice,allowUnitPriceEditing,adjustment\r\n/,
      );

      const file = tools.getByLabel('CSV file to import');
      const bad = 'productId,currency,listPrice\nDEMO-CPU-8C,USD,355\nDEMO-CPU-12C,USD,5 hundred\n';
      await file.setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
      await tools.getByRole('button', { name: 'Preview the import' }).click();
      const problem = tools.locator('.problem[data-status="422"]');
      await problem.waitFor();
      assert.match(
        (await problem.textContent()) as string,
        /Line 3, list price: "5 hundred" is not an amount/,
      );
      await check(page, 'csv-bad-row', tools);

      const good = 'productId,currency,listPrice\nDEMO-CPU-8C,USD,355.125\nDEMO-CPU-12C,USD,529\n';
      await file.setInputFiles({ name: 'good.csv', mimeType: 'text/csv', buffer: Buffer.from(good) });
      await tools.getByRole('button', { name: 'Preview the import' }).click();
      const preview = tools.locator('.preview[data-preview="csv"]');
      await preview.waitFor();
      assert.match((await preview.textContent()) as string, /1 price changes; 1 stay as they are\./);
      assert.match(
        (await preview.locator('tbody tr').textContent()) as string,
        /^28-core processorUSD.*→ \$355\.125/,
      );
      await check(page, 'csv-preview', tools);
      await tools.getByRole('button', { name: 'Import the file' }).click();
      await tools.getByText('Applied: 1 price changed.').waitFor();
      // A unit price finer than the currency is shown exactly, and said to be so.
      const cell = page.locator('tr[data-product="DEMO-CPU-8C"] td[data-currency="USD"]');
      await cell.locator('.list', { hasText: '$355.125' }).waitFor();
      assert.equal(await cell.locator('.finer').textContent(), 'a unit price to 3 decimals; USD uses 2');
    });
  }

  test('a quote from the builder to a finalized document, approved by an approver key', async () => {
    const { bundleId, options } = await seedDemo(ctx.db, 'acme');
    const optionId = (name: string) => options.find((o) => o.name === name)?.optionId as string;
    const policy = await ctx.call('POST', '/v1/approval-policies', {
      body: { name: 'Deep discounts', when: { lineDiscountPercentAbove: 20 } },
    });
    assert.equal(policy.status, 201, policy.text);
    const approverKey = await ctx.newKey('acme', { approver: true, name: 'Sales director' });
    const readOnlyKey = await ctx.newKey('acme', { readOnly: true });

    const page = await open(desktop);
    await page.goto(
      url(
        `/bundles/${bundleId}/quote?currency=USD&s=${optionId('Processor')}~~DEMO-CPU-12C` +
          `&s=${optionId('Accessories')}~~DEMO-DOCK`,
      ),
    );
    await page.getByRole('button', { name: 'Use the suggestion' }).click();
    await page.locator('.verdict[data-complete="true"]').waitFor();
    await page.getByRole('button', { name: 'Save as quote', exact: true }).click();
    await page.getByRole('heading', { name: /^Quote Q-\d+/, level: 1 }).waitFor();
    const quoteId = new URL(page.url()).pathname.split('/').at(-1) as string;
    const stored = async () => (await ctx.call('GET', `/v1/quotes/${quoteId}`)).body;
    assert.equal((await stored()).status, 'draft');
    const line = page.locator('tr[data-line="DEMO-CPU-12C"]');
    assert.match(
      (await line.locator('th').textContent()) as string,
      /^12-core processorProcessor · DEMO-CPU-12C$/,
    );
    assert.equal(await page.locator('[data-quote-status]').textContent(), 'Draft');
    await check(page, 'saved-quote');

    // A unit price only where the price book lets a rep set one: the dock's (which has no adjustment), not the
    // processor's.
    const editLine = (productId: string) =>
      page.getByRole('button', { name: new RegExp(`^Edit .*\\(${productId}\\)$`) });
    await editLine('DEMO-CPU-12C').click();
    await page.getByLabel('Discount %').waitFor();
    assert.equal(await page.getByLabel(/^Unit price/).count(), 0);
    await page.getByRole('button', { name: 'Cancel' }).click();
    const dock = page.locator('tr[data-line="DEMO-DOCK"]');
    await editLine('DEMO-DOCK').click();
    await page.getByLabel('Unit price (USD)').fill('199');
    await check(page, 'saved-quote-unit-price');
    await page.setViewportSize(phone);
    await check(page, 'saved-quote-unit-price');
    await page.setViewportSize(desktop);
    await page.getByRole('button', { name: 'Save the line' }).click();
    // The unit price cell (the quantity's is the first).
    await dock.locator('td:nth-of-type(2)', { hasText: /^\$199\.00$/ }).waitFor();
    const dockLine = (await stored()).lines.find((l: { productId: string }) => l.productId === 'DEMO-DOCK');
    assert.deepEqual(
      [dockLine.unitPrice, dockLine.allowUnitPriceEditing, dockLine.adjustment],
      [199, true, null],
    );

    // A discount past the policy's 20%.
    await editLine('DEMO-CPU-12C').click();
    await page.getByLabel('Discount %').fill('25');
    await check(page, 'saved-quote-edit');
    await page.getByRole('button', { name: 'Save the line' }).click();
    await line.locator('[data-discount]', { hasText: '25%' }).waitFor();
    assert.equal(await page.locator('[data-total]').textContent(), `$${(await stored()).total.toFixed(2)}`);

    // Someone else edits the quote meanwhile: the 412 is explained, the edit is kept and can be saved over it.
    const patched = await ctx.call('PATCH', `/v1/quotes/${quoteId}`, { body: { title: 'Design team' } });
    assert.equal(patched.status, 200, patched.text);
    await editLine('DEMO-CPU-12C').click();
    await page.getByLabel('Discount %').fill('30');
    await page.getByRole('button', { name: 'Save the line' }).click();
    const conflict = page.locator('.conflict[data-status="412"]');
    await conflict.waitFor();
    assert.equal(await page.getByLabel('Discount %').inputValue(), '30');
    await check(page, 'saved-quote-conflict');
    await conflict.getByRole('button', { name: 'Save mine over them' }).click();
    await line.locator('[data-discount]', { hasText: '30%' }).waitFor();
    assert.equal((await stored()).title, 'Design team');

    // Submitted, it waits for an approver; the rep's key is not one, so it has no approve button.
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.locator('[data-quote-status="pending_approval"]').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0);
    assert.match(
      (await page.locator('.approvals').textContent()) as string,
      /Pending.*line discount above 20%/,
    );

    // A read-only key sees the quote and no control that changes it.
    const reader = await open(desktop, readOnlyKey);
    await reader.goto(url(`/quotes/${quoteId}`));
    await reader.locator('[data-quote-status="pending_approval"]').waitFor();
    assert.equal(await reader.getByRole('button', { name: /^Edit/ }).count(), 0);
    assert.equal(await reader.getByRole('heading', { name: 'Next step' }).count(), 0);

    const approver = await open(phone, approverKey);
    await approver.goto(url(`/quotes/${quoteId}`));
    await approver.getByRole('button', { name: 'Approve' }).waitFor();
    await approver.getByLabel('Comment (optional)').fill('Strategic account');
    await check(approver, 'saved-quote-approver');
    await approver.getByRole('button', { name: 'Approve' }).click();
    await approver.locator('[data-quote-status="approved"]').waitFor();
    assert.match(
      (await approver.locator('.approvals').textContent()) as string,
      /Approved.*by Sales director.*Strategic account/,
    );

    // The rep's page still holds the version before the approval: finalizing it is a 412, explained, then done.
    await page.reload();
    await page.locator('[data-quote-status="approved"]').waitFor();
    await ctx.call('PATCH', `/v1/quotes/${quoteId}`, { body: { title: 'Design team' } }).then((r) => {
      // An edit of an approved quote returns it to draft: the rep's page must be told, not act on it.
      assert.equal(r.status, 200, r.text);
    });
    await page.getByRole('button', { name: 'Finalize' }).click();
    await page.locator('.conflict[data-status="412"]').waitFor();
    await page.getByRole('button', { name: 'Reload the quote' }).click();
    await page.locator('[data-quote-status="draft"]').waitFor();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.locator('[data-quote-status="pending_approval"]').waitFor();
    await approver.reload();
    await approver.getByRole('button', { name: 'Approve' }).click();
    await approver.locator('[data-quote-status="approved"]').waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Finalize' }).click();
    await page.locator('[data-quote-status="open"]').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Edit/ }).count(), 0);
    await page.getByRole('button', { name: 'Customer accepted' }).waitFor();
    await check(page, 'saved-quote-open');

    const number = (await stored()).number as string;
    for (const [button, suffix, start] of [
      ['Download the PDF', 'pdf', '%PDF-'],
      ['Download the document (HTML)', 'html', '<!DOCTYPE html>'],
    ] as const) {
      const downloading = page.waitForEvent('download');
      await page.getByRole('button', { name: button }).click();
      const download = await downloading;
      assert.equal(download.suggestedFilename(), `${number}-v1.${suffix}`);
      const stream = await download.createReadStream();
      const head = await new Promise<string>((resolve, reject) => {
        stream.once('data', (chunk) => resolve(String(chunk).slice(0, start.length)));
        stream.on('error', reject);
      });
      assert.equal(head.toLowerCase(), start.toLowerCase());
    }

    // The events page names the approver's key and links the approval to the quote.
    await page.goto(url('/events?type=quote.approved'));
    const approval = page.locator('ol.event-list > li').first();
    assert.equal(await approval.locator('[data-key]').textContent(), 'by Sales director');
    await check(page, 'events-approval');
    await approval.getByRole('link', { name: `Quote ${number}` }).click();
    await page.locator('[data-quote-status="open"]').waitFor();

    // The list finds it by number, under its status.
    const list = await open(phone);
    await list.getByRole('link', { name: 'Quotes' }).click();
    await list.getByRole('heading', { name: 'Quotes', level: 1 }).waitFor();
    await list.getByLabel('Number or customer').fill(number);
    await list.getByLabel('Number or customer').press('Enter');
    await list.getByLabel('Status').selectOption('open');
    await list.waitForURL(/status=open/);
    await list.waitForURL(new RegExp(`q=${number}`));
    const rows = list.locator('tbody tr');
    // The earlier list shows until the filtered one arrives: wait for it to be the one row. (By locators: a
    // function waited on as a string is evaluated, which the console's CSP refuses once it must poll.)
    await rows.nth(1).waitFor({ state: 'detached' });
    await list.locator(`tbody tr[data-quote="${number}"]`).waitFor();
    assert.equal(await rows.count(), 1);
    assert.equal(await rows.first().getAttribute('data-quote'), number);
    await check(list, 'quotes');
    await page.setViewportSize(phone);
    await check(page, 'saved-quote-open');
  });
});
