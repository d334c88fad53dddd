import { compileUserFunction, UserFunctionInput } from './user-function';

const now = new Date('2026-11-23T00:00:00Z');
const input: UserFunctionInput = { score: 0.4, text: 't', document_id: 'd', corpus_key: 'c', part_metadata: { lang: 'eng' }, document_metadata: { published: '2026-11-13T00:00:00Z', boost: 3 } };
const run = (source: string) => compileUserFunction(source, 'f', now)(input);

describe('userfn expressions', () => {
  it('reads the result through get() with defaults, and has math, conditionals and time', () => {
    expect(run("get('$.score') * get('$.document_metadata.boost')")).toBeCloseTo(1.2);
    expect(run("get('$.document_metadata.missing', 7)")).toBe(7);
    expect(run("if(get('$.part_metadata.lang') == 'eng', 1, 0)")).toBe(1);
    expect(run("max(get('$.score'), 0.9) + abs(-1)")).toBeCloseTo(1.9);
    expect(run("as_days(now() - iso_datetime_parse(get('$.document_metadata.published')))")).toBe(10);
  });

  it('drops a result (null) for null, non-numbers and missing values without a default', () => {
    expect(run('null')).toBeNull();
    expect(run("get('$.text')")).toBeNull();
    expect(run("get('$.document_metadata.missing')")).toBeNull();
  });

  it('refuses bad syntax, unknown functions and reaching outside the result, as 400s', () => {
    for (const bad of ["get('$.score' *", 'knee()', "'a'.constructor", "get('score')", 'process.exit(1)']) {
      expect(() => run(bad)).toThrow(expect.objectContaining({ kind: 'invalid', code: 'reranker.invalid_function' }));
    }
  });
});
