// The matching of approval policies (contract C19): every condition, each at its threshold and just above it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type LineForApproval,
  matchPolicies,
  type PolicyForApproval,
  type QuoteForApproval,
  reasonsOf,
} from '../../src/approvals/policy-match.ts';

const line = (discountPercent: number | string | null, unitPriceEdited = false): LineForApproval => ({
  discountPercent,
  unitPriceEdited,
});

function quote(parts: Partial<QuoteForApproval> = {}): QuoteForApproval {
  return { currency: 'USD', listTotal: 1000, total: 1000, lines: [line(null)], ...parts };
}

const policy = (id: string, when: PolicyForApproval['when'], isActive = true): PolicyForApproval => ({
  id,
  isActive,
  when,
});

describe('line discount above', () => {
  test('at the threshold no match; one hundredth above it, a match naming the line', () => {
    const when = { lineDiscountPercentAbove: 10 };
    assert.deepEqual(reasonsOf(quote({ lines: [line(10), line(0)] }), when), []);
    assert.deepEqual(reasonsOf(quote({ lines: [line(9.99), line(10.01)] }), when), [
      'line discount above 10%: line 2 at 10.01%',
    ]);
  });

  test('decimal-exact: 0.1 + 0.2 style thresholds do not drift', () => {
    const when = { lineDiscountPercentAbove: 0.3 };
    assert.deepEqual(reasonsOf(quote({ lines: [line(0.3)] }), when), []);
    assert.deepEqual(reasonsOf(quote({ lines: [line('0.30')] }), when), []);
    assert.equal(reasonsOf(quote({ lines: [line(0.31)] }), when).length, 1);
  });

  test('a line with no discount never matches, even a threshold of 0; any discount above 0 does', () => {
    const when = { lineDiscountPercentAbove: 0 };
    assert.deepEqual(reasonsOf(quote({ lines: [line(null), line(0)] }), when), []);
    assert.deepEqual(reasonsOf(quote({ lines: [line(0.01)] }), when), [
      'line discount above 0%: line 1 at 0.01%',
    ]);
  });

  test('many lines above: five named, then how many more', () => {
    const lines = Array.from({ length: 8 }, (_, i) => line(20 + i));
    assert.deepEqual(reasonsOf(quote({ lines }), { lineDiscountPercentAbove: 15 }), [
      'line discount above 15%: line 1 at 20%, line 2 at 21%, line 3 at 22%, line 4 at 23%, line 5 at 24% and 3 more',
    ]);
  });
});

describe('quote discount above', () => {
  const when = { quoteDiscountPercentAbove: 10 };

  test('at the threshold no match (1000 listed, 900 total is exactly 10%); a cent more off, a match', () => {
    assert.deepEqual(reasonsOf(quote({ listTotal: 1000, total: 900 }), when), []);
    assert.deepEqual(reasonsOf(quote({ listTotal: 1000, total: 899.99 }), when), [
      'quote discount 10.001% is above 10%',
    ]);
  });

  test('compared without dividing: a third off is above 33.33 and not above 33.34, and said to be about', () => {
    const third = quote({ listTotal: 300, total: 200 });
    assert.deepEqual(reasonsOf(third, { quoteDiscountPercentAbove: 33.33 }), [
      'quote discount about 33.3333% is above 33.33%',
    ]);
    assert.deepEqual(reasonsOf(third, { quoteDiscountPercentAbove: 33.34 }), []);
  });

  test('a quote listing at 0, or priced above its list, has no discount', () => {
    assert.deepEqual(reasonsOf(quote({ listTotal: 0, total: 0 }), { quoteDiscountPercentAbove: 0 }), []);
    assert.deepEqual(reasonsOf(quote({ listTotal: 100, total: 120 }), { quoteDiscountPercentAbove: 0 }), []);
  });

  test('decimal text and large amounts stay exact', () => {
    const big = quote({ listTotal: '999999999999999.99', total: '899999999999999.99' });
    // (999999999999999.99 - 899999999999999.99) / 999999999999999.99 is a hair above 10%.
    assert.equal(reasonsOf(big, when).length, 1);
    const exact = quote({ listTotal: '1000000000000000', total: '900000000000000' });
    assert.deepEqual(reasonsOf(exact, when), []);
  });
});

describe('total above', () => {
  const when = { totalAbove: { currency: 'EUR', amount: 10000 } };

  test('at the amount no match; a cent above, a match', () => {
    assert.deepEqual(reasonsOf(quote({ currency: 'EUR', total: 10000 }), when), []);
    assert.deepEqual(reasonsOf(quote({ currency: 'EUR', total: 10000.01 }), when), [
      'total 10000.01 EUR is above 10000 EUR',
    ]);
  });

  test('a quote in another currency never matches, whatever its total', () => {
    assert.deepEqual(reasonsOf(quote({ currency: 'USD', total: 1e12 }), when), []);
  });

  test('amounts with more decimals than the currency compare exactly', () => {
    const fine = { totalAbove: { currency: 'JPY', amount: 100.5 } };
    assert.deepEqual(reasonsOf(quote({ currency: 'JPY', total: 100 }), fine), []);
    assert.equal(reasonsOf(quote({ currency: 'JPY', total: 101 }), fine).length, 1);
  });
});

describe('unit price edited', () => {
  test('true: holds when some line has a rep-set unit price, naming the lines', () => {
    const lines = [line(null), line(null, true), line(5, true)];
    assert.deepEqual(reasonsOf(quote({ lines }), { unitPriceEdited: true }), [
      'unit price set by the rep on line 2, line 3',
    ]);
    assert.deepEqual(reasonsOf(quote({ lines: [line(null)] }), { unitPriceEdited: true }), []);
  });

  test('false is no condition', () => {
    assert.deepEqual(reasonsOf(quote({ lines: [line(null, true)] }), { unitPriceEdited: false }), []);
  });
});

describe('matchPolicies', () => {
  const discounted = quote({
    listTotal: 2000,
    total: 1500,
    lines: [line(30, true), line(0)],
  });

  test('a policy matches when any of its conditions holds, and lists every one that does', () => {
    const all = policy('apl_all', {
      lineDiscountPercentAbove: 25,
      quoteDiscountPercentAbove: 50,
      totalAbove: { currency: 'USD', amount: 1000 },
      unitPriceEdited: true,
    });
    assert.deepEqual(matchPolicies(discounted, [all]), [
      {
        policyId: 'apl_all',
        reason:
          'line discount above 25%: line 1 at 30%; total 1500 USD is above 1000 USD; unit price set by the rep on line 1',
      },
    ]);
  });

  test('each matching policy in the order given; non-matching ones left out', () => {
    const policies = [
      policy('apl_1', { quoteDiscountPercentAbove: 20 }),
      policy('apl_2', { quoteDiscountPercentAbove: 25 }),
      policy('apl_3', { totalAbove: { currency: 'USD', amount: 1499.99 } }),
    ];
    assert.deepEqual(matchPolicies(discounted, policies), [
      { policyId: 'apl_1', reason: 'quote discount 25% is above 20%' },
      { policyId: 'apl_3', reason: 'total 1500 USD is above 1499.99 USD' },
    ]);
  });

  test('inactive policies never match, whatever their conditions', () => {
    const policies = [
      policy(
        'apl_off',
        { lineDiscountPercentAbove: 0, quoteDiscountPercentAbove: 0, unitPriceEdited: true },
        false,
      ),
      policy('apl_off_total', { totalAbove: { currency: 'USD', amount: 0 } }, false),
    ];
    assert.deepEqual(matchPolicies(discounted, policies), []);
  });

  test('no policies, no match', () => {
    assert.deepEqual(matchPolicies(discounted, []), []);
  });
});
