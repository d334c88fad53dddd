import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { getMetadataStorage } from 'class-validator';

/*
 * Written by hand instead of class-transformer's plainToInstance, which (0.5.1) is quadratic in the keys of
 * an object (50,000 metadata keys: 1.8 s on the event loop), drops `constructor` keys from free-form metadata,
 * and throws a TypeError (a 500) when a `constructor` key holds a non-function. The DTOs only use `@Type(() =>
 * Dto)`, whose metadata class-transformer keeps in its storage: that is all this reads.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

type Ctor<T> = new () => T;

/**
 * An array longer than its `@ArrayMaxSize`, found while building: class-validator would validate every element
 * (every nested DTO) before saying the array is too long — 100,000 nested items held the event loop for 1.4 s.
 */
export class TooManyElements extends Error {
  constructor(
    readonly path: string,
    readonly max: number,
  ) {
    super(`${path.split('.').pop()} must contain no more than ${max} elements`);
  }
}

const maxSizes = new WeakMap<Ctor<object>, Map<string, number>>();
function maxSizeOf(cls: Ctor<object>, key: string): number | undefined {
  let sizes = maxSizes.get(cls);
  if (!sizes) {
    sizes = new Map();
    for (const m of getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false)) {
      if (m.name === 'arrayMaxSize' && typeof m.constraints?.[0] === 'number') sizes.set(m.propertyName, m.constraints[0]);
    }
    maxSizes.set(cls, sizes);
  }
  return sizes.get(key);
}

/**
 * A DTO instance for class-validator: own fields copied as given, nested DTOs (declared with `@Type`) built
 * the same way, one level per declared type; values without a declared type (free-form metadata) are kept as
 * they are, never walked. Linear in the size of the typed part of the body.
 */
export function toDto<T extends object>(cls: Ctor<T>, plain: Record<string, unknown>, path = ''): T {
  const instance = new cls() as Record<string, unknown>;
  for (const key of Object.keys(plain)) {
    const value = plain[key];
    const at = path ? `${path}.${key}` : key;
    const max = Array.isArray(value) ? maxSizeOf(cls, key) : undefined;
    if (max !== undefined && (value as unknown[]).length > max) throw new TooManyElements(at, max);
    const nested = nestedTypeOf(cls, key);
    Object.defineProperty(instance, key, { value: nested ? build(nested, value, at) : value, enumerable: true, writable: true, configurable: true });
  }
  return instance as T;
}

/** The DTO class a field's values are built as (`@Type(() => Dto)`), if any. */
export function nestedTypeOf(cls: Ctor<object>, key: string): Ctor<object> | undefined {
  return defaultMetadataStorage.findTypeMetadata(cls, key)?.typeFunction() as Ctor<object> | undefined;
}

function build(cls: Ctor<object>, value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((v, i) => build(cls, v, `${path}.${i}`));
  if (value !== null && typeof value === 'object') return toDto(cls, value as Record<string, unknown>, path);
  return value;
}
