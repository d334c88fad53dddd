import { attributeStats } from './filter-stats';

describe('filter attribute statistics', () => {
  it('counts list elements one by one (a lone scalar as a list of one) and keeps only values of the declared type', () => {
    expect(attributeStats([['a', 'b'], ['b'], 'b', 3, ['c', 4]], 'list[text]', 10)).toEqual({
      values: [{ value: 'b', count: 3 }, { value: 'a', count: 1 }, { value: 'c', count: 1 }],
    });
    expect(attributeStats([true, false, true, 'true'], 'boolean', 10)).toEqual({ values: [{ value: true, count: 2 }, { value: false, count: 1 }] });
  });

  it('orders by count then value, cuts at max_values, and sums every numeric value for the statistics', () => {
    const result = attributeStats([3, 1, 3, 2, 2, 2, 1.5], 'integer', 2);
    expect(result).toEqual({ values: [{ value: 2, count: 3 }, { value: 3, count: 2 }], stats: { min: 1, max: 3, avg: 13 / 6, sum: 13 } });
    expect(attributeStats([[1.5, 2.5], [2.5]], 'list[real_number]', 5).stats).toEqual({ min: 1.5, max: 2.5, avg: 6.5 / 3, sum: 6.5 });
    expect(attributeStats([], 'integer', 5)).toEqual({ values: [] });
  });
});
