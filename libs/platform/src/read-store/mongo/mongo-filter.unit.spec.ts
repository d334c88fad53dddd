import { Query } from 'mingo';
import { filterToMongo } from './mongo-filter';
import { parseFilter } from '../../filter/parse-filter';

const d = (name: string) => ({ $getField: { field: { $literal: name }, input: '$$d' } });
const body = (text: string, paths: { doc: string; part?: string } = { doc: 'metadata' }) =>
  (filterToMongo(parseFilter(text), paths) as { $expr: { $let: { in: unknown } } }).$expr.$let.in;
const isNumber = (v: unknown) => ({ $isNumber: v });
const isString = (v: unknown) => ({ $eq: [{ $type: v }, 'string'] });

describe('filterToMongo', () => {
  it('reads each level through $let, as {} when it is not an object, and every field with $getField', () => {
    expect(filterToMongo(parseFilter('doc.year >= 2020'), { doc: 'metadata', part: 'p.meta' })).toEqual({
      $expr: {
        $let: {
          vars: {
            d: { $cond: [{ $eq: [{ $type: '$metadata' }, 'object'] }, '$metadata', { $literal: {} }] },
            p: { $cond: [{ $eq: [{ $type: '$p.meta' }, 'object'] }, '$p.meta', { $literal: {} }] },
          },
          in: { $and: [isNumber(d('year')), { $gte: [d('year'), { $literal: 2020 }] }] },
        },
      },
    });
  });

  it('guards every comparison by the literal type, and quotes literals that look like field paths', () => {
    expect(body(`doc."a.b" = '$x'`)).toEqual({ $and: [isString(d('a.b')), { $eq: [d('a.b'), { $literal: '$x' }] }] });
    expect(body('doc."$n" != true')).toEqual({ $and: [{ $eq: [{ $type: d('$n') }, 'bool'] }, { $ne: [d('$n'), { $literal: true }] }] });
  });

  it('pushes NOT down to the atoms (De Morgan, inverted operators), keeping the type guards', () => {
    const [a, b] = [d('a'), d('b')];
    expect(body('NOT (doc.a < 1 OR doc.b = 2)')).toEqual({
      $and: [{ $and: [isNumber(a), { $gte: [a, { $literal: 1 }] }] }, { $and: [isNumber(b), { $ne: [b, { $literal: 2 }] }] }],
    });
    expect(body('NOT (doc.a < 1 AND NOT doc.b = 2)')).toEqual({
      $or: [{ $and: [isNumber(a), { $gte: [a, { $literal: 1 }] }] }, { $and: [isNumber(b), { $eq: [b, { $literal: 2 }] }] }],
    });
  });

  it('translates IN with a guard per listed type, and NOT IN as a guarded $not', () => {
    const x = d('x');
    const member = { $in: [x, { $literal: [1, 'a'] }] };
    const typed = { $or: [isNumber(x), isString(x)] };
    expect(body(`doc.x IN (1, 'a')`)).toEqual({ $and: [typed, member] });
    expect(body(`doc.x NOT IN (1, 'a')`)).toEqual({ $and: [typed, { $not: [member] }] });
  });

  it('translates IS NULL by $type, and LIKE to an anchored regex with every metacharacter escaped', () => {
    const x = d('x');
    const isNull = { $in: [{ $type: x }, ['missing', 'null']] };
    expect(body('doc.x IS NULL')).toEqual(isNull);
    expect(body('doc.x IS NOT NULL')).toEqual({ $not: [isNull] });
    expect(body('NOT doc.x IS NOT NULL')).toEqual(isNull);
    const match = { $regexMatch: { input: x, regex: '^a\\.b\\(c\\)\\[\\^\\$\\][\\s\\S]*[\\s\\S]%(?![\\s\\S])' } };
    expect(body(`doc.x LIKE 'a.b(c)[^$]%_\\%'`)).toEqual({ $cond: [isString(x), match, false] });
    expect(body(`doc.x NOT LIKE 'a.b(c)[^$]%_\\%'`)).toEqual({ $cond: [isString(x), { $not: [match] }, false] });
  });

  it('rejects part fields when no part path is given', () => {
    expect(() => filterToMongo(parseFilter(`doc.a = 1 OR part.lang = 'eng'`), { doc: 'metadata' })).toThrow(
      expect.objectContaining({ kind: 'invalid', code: 'filter.level_unsupported', message: expect.stringContaining('part.lang') }),
    );
  });

  it('selects in a MongoDB query engine (mingo) what the semantics select', () => {
    const docs = [
      { id: 'num', metadata: { x: 1, 'a.b': 'a.b', $n: true } },
      { id: 'str', metadata: { x: '1', s: 'abc\n' } },
      { id: 'arr', metadata: { x: [1] } },
      { id: 'null', metadata: { x: null } },
      { id: 'none', metadata: 'not an object' },
    ];
    const ids = (text: string) => new Query(filterToMongo(parseFilter(text), { doc: 'metadata' })).find<{ id: string }>(docs).all().map((r) => r.id);
    expect(ids('doc.x = 1')).toEqual(['num']);
    expect(ids('NOT doc.x = 1')).toEqual([]);
    expect(ids('doc.x != 2')).toEqual(['num']);
    expect(ids(`doc.x IN (1, '1')`)).toEqual(['num', 'str']);
    expect(ids('doc.x IS NULL')).toEqual(['null', 'none']);
    expect(ids(`doc."a.b" LIKE 'a_b' AND doc."$n" = true`)).toEqual(['num']);
    expect(ids(`doc.s LIKE 'abc'`)).toEqual([]);
  });
});
