import { RateLimiterMemory } from 'rate-limiter-flexible';
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import fc from 'fast-check';
import { DomainError } from '@lib/platform';
import { AuthFailures } from './auth-failures';
import { checkJsonShape, JSON_SHAPE_LIMITS } from './json-shape';
import { redactUrl } from './redact';
import { validateBody } from './validation';
import { isBase64 } from '../corpora/attachment.dto';
import { QueryRequestDto } from '../corpora/query.dto';

const refusal = (f: () => void): Record<string, string> | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return e.details.fieldErrors as Record<string, string>;
  }
};

describe('checkJsonShape', () => {
  it('accepts values within the limits, whatever they hold', () => {
    // `__proto__` is the one key refused whatever the size (its own test below); fast-check generates it now and then.
    const withinLimits = fc.jsonValue({ maxDepth: 10 }).filter((v) => !JSON.stringify(v).includes('"__proto__"'));
    fc.assert(fc.property(withinLimits, (v) => expect(refusal(() => checkJsonShape(v))).toBeUndefined()));
  });

  it('names the path of what exceeds a limit', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(refusal(() => checkJsonShape({ a: { b: deep } }))).toEqual({ 'body.a.b[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]': 'is nested more than 32 levels deep' });
    expect(refusal(() => checkJsonShape({ list: new Array(JSON_SHAPE_LIMITS.maxArrayLength + 1).fill(0) }))).toEqual({ 'body.list': 'has more than 100000 elements' });
    expect(refusal(() => checkJsonShape(JSON.parse('{"m":[{"__proto__":1}]}'), 'metadata'))).toEqual({ 'metadata.m[0].__proto__': 'is not an allowed key' });
    const values = { ...JSON_SHAPE_LIMITS, maxValues: 10 };
    expect(refusal(() => checkJsonShape([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'body', values))).toEqual({ body: 'holds more than 10 values' });
  });

  it('walks a million nested values without recursion', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(refusal(() => checkJsonShape(deep, 'body', { ...JSON_SHAPE_LIMITS, maxDepth: 2_000_000 }))).toBeUndefined();
  });
});

class InnerDto {
  @IsString() text!: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}
class OuterDto {
  @IsString() id!: string;
  @ValidateNested({ each: true }) @Type(() => InnerDto) parts!: InnerDto[];
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

describe('validateBody', () => {
  it('builds nested DTOs, keeps free-form metadata as given (constructor included) and refuses unknown fields', () => {
    const dto = validateBody(OuterDto, { id: 'a', parts: [{ text: 'x', metadata: { constructor: 'c', n: { constructor: [1] } } }], metadata: { constructor: 1, toString: 2 } });
    expect(dto).toBeInstanceOf(OuterDto);
    expect(dto.parts[0]).toBeInstanceOf(InnerDto);
    expect(dto.parts[0].metadata).toEqual({ constructor: 'c', n: { constructor: [1] } });
    expect(dto.metadata).toEqual({ constructor: 1, toString: 2 });
    expect(refusal(() => validateBody(OuterDto, { id: 'a', parts: [{ text: 'x', extra: 1 }] }))).toEqual({ 'parts.0.extra': 'property extra should not exist' });
    expect(refusal(() => validateBody(OuterDto, { id: 'a', parts: [{ text: 3 }] }))).toEqual({ 'parts.0.text': 'text must be a string' });
  });
});

describe('redactUrl', () => {
  it('hides credentials in query strings under any name that says so, or any value that looks like one', () => {
    const url = '/v2/corpora?x_api_key=s1&api-key=s2&Authorization=s3&password=s4&jwt=s5&client_secret=s6&sessionToken=s7&limit=10&q=zqt_aky_1_secret&t=eyJhbGciOi&filter=doc.x%3D1';
    expect(redactUrl(url)).toBe('/v2/corpora?x_api_key=****&api-key=****&Authorization=****&password=****&jwt=****&client_secret=****&sessionToken=****&limit=10&q=****&t=****&filter=doc.x%3D1');
    expect(redactUrl('/health')).toBe('/health');
    expect(redactUrl('/x?%E0%A4%A=1&token')).toBe('/x?%E0%A4%A=1&token');
  });
});

describe('AuthFailures', () => {
  it('blocks an address past its limit except for credentials that already succeeded from it', async () => {
    let now = 0;
    const failures = new AuthFailures(new RateLimiterMemory({ points: 2, duration: 60 }), () => now);
    failures.admit('1.1.1.1', 'key-a', await failures.blockedFor('1.1.1.1'), 'x');
    await failures.failed('1.1.1.1');
    await failures.failed('1.1.1.1');
    const blocked = await failures.blockedFor('1.1.1.1');
    expect(blocked).toBeDefined();
    expect(() => failures.admit('1.1.1.1', 'key-a', blocked, 'x')).not.toThrow();
    expect(() => failures.admit('1.1.1.1', 'key-b', blocked, 'x')).toThrow(/Too many x/);
    expect(await failures.blockedFor('2.2.2.2')).toBeUndefined();
    now = 25 * 60 * 60 * 1000;
    expect(() => failures.admit('1.1.1.1', 'key-a', blocked, 'x')).toThrow(/Too many x/);
  });
});

describe('Base64 image data', () => {
  it('accepts what Buffer writes as Base64, refuses the rest, and takes a 7 MB string in one pass', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => expect(isBase64(Buffer.from(bytes).toString('base64'))).toBe(true)));
    for (const bad of ['abc', 'ab=c', 'a*bc', 'ab==c===', '====']) expect(isBase64(bad)).toBe(false);
    expect(isBase64(Buffer.alloc(5 * 1024 * 1024 + 1, 1).toString('base64'))).toBe(true);
  });
});

describe('arrays past their @ArrayMaxSize', () => {
  it('are refused before any element is validated, naming the field, however many elements come', () => {
    const corpora = Array.from({ length: 100_000 }, () => ({ corpus_key: 'c', lexical_interpolation: 'not a number' }));
    let thrown: DomainError | undefined;
    try {
      validateBody(QueryRequestDto, { query: 'x', search: { corpora } });
    } catch (e) {
      thrown = e as DomainError;
    }
    expect(thrown?.details.fieldErrors).toEqual({ 'search.corpora': 'corpora must contain no more than 100 elements' });
  });
});
