import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';

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
 * A DTO instance for class-validator: own fields copied as given, nested DTOs (declared with `@Type`) built
 * the same way, one level per declared type; values without a declared type (free-form metadata) are kept as
 * they are, never walked. Linear in the size of the typed part of the body.
 */
export function toDto<T extends object>(cls: Ctor<T>, plain: Record<string, unknown>): T {
  const instance = new cls() as Record<string, unknown>;
  for (const key of Object.keys(plain)) {
    const value = plain[key];
    const nested = defaultMetadataStorage.findTypeMetadata(cls, key)?.typeFunction() as Ctor<object> | undefined;
    Object.defineProperty(instance, key, { value: nested ? build(nested, value) : value, enumerable: true, writable: true, configurable: true });
  }
  return instance as T;
}

function build(cls: Ctor<object>, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => build(cls, v));
  if (value !== null && typeof value === 'object') return toDto(cls, value as Record<string, unknown>);
  return value;
}
