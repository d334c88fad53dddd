import type { MetadataStorage as TransformerStorage } from 'class-transformer/types/MetadataStorage';
import { getMetadataStorage, IS_OBJECT, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import type { DtoClass } from './openapi.decorator';

// The storage class-transformer keeps `@Type(() => Dto)` in, as http/dto.ts reads it (the package exports no getter).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformerStorage };

export const SCHEMA_PREFIX = '#/components/schemas/';

/** A JSON Schema object as the document holds it. */
export type Schema = Record<string, unknown>;

/**
 * The JSON Schemas of DTO classes and of every DTO nested in them, keyed by class name, from the class-validator
 * metadata `validateBody` checks (class-validator-jsonschema). Bodies are validated with `forbidNonWhitelisted`, so
 * every object says `additionalProperties: false`. Two different classes of one name would share one schema
 * (the library keys by name): refused here, so the document never describes one DTO with another's fields.
 */
export function dtoSchemas(roots: readonly DtoClass[]): Record<string, Schema> {
  const byName = new Map<string, DtoClass>();
  const schemas: Record<string, Schema> = {};
  const queue = [...roots];
  for (let cls = queue.pop(); cls; cls = queue.pop()) {
    const known = byName.get(cls.name);
    if (known === cls) continue;
    if (known) throw new Error(`two DTO classes are named ${cls.name}: the OpenAPI document would describe one with the other's fields (rename one)`);
    byName.set(cls.name, cls);
    const schema = targetConstructorToSchema(cls, { refPointerPrefix: SCHEMA_PREFIX, classTransformerMetadataStorage: defaultMetadataStorage, additionalConverters: CONVERTERS }) as Schema;
    schemas[cls.name] = { ...schema, additionalProperties: false };
    queue.push(...nestedDtos(cls));
  }
  return schemas;
}

/**
 * The library reads a custom validator's field as its declared TypeScript type, and names any class a `$ref`: an
 * array or object field (`@IsCellGrid() rows: TableCell[][]`) pointed at schemas `Array` and `Object`, which do
 * not exist. Its JSON type is said instead; a class-typed field validated by hand is an open object.
 */
const CONVERTERS = {
  // `@IsDefined` is said by `required`; the library's `not: {type: 'null'}` is not OpenAPI 3.0 (it has no type null).
  [ValidationTypes.IS_DEFINED]: {},
  // A free-form object (`@IsObject() metadata`): open, said so for generators that read a bare object as empty.
  [IS_OBJECT]: { type: 'object' as const, additionalProperties: true },
  [ValidationTypes.CUSTOM_VALIDATION]: (meta: ValidationMetadata): Schema => {
    const type = Reflect.getMetadata('design:type', (meta.target as Function).prototype, meta.propertyName) as unknown;
    if (type === String) return { type: 'string' };
    if (type === Number) return { type: 'number' };
    if (type === Boolean) return { type: 'boolean' };
    if (type === Array) return { type: 'array', items: {} };
    return {};
  },
};

/** The classes a DTO's `@ValidateNested` fields are built as (`@Type`, else the field's declared type). */
function nestedDtos(cls: DtoClass): DtoClass[] {
  return getMetadataStorage()
    .getTargetValidationMetadatas(cls, '', true, false)
    .filter((m) => m.type === ValidationTypes.NESTED_VALIDATION)
    .map((m) => (defaultMetadataStorage.findTypeMetadata(cls, m.propertyName)?.typeFunction() ?? Reflect.getMetadata('design:type', cls.prototype, m.propertyName)) as DtoClass | undefined)
    .filter((c): c is DtoClass => typeof c === 'function' && c !== Object && c !== Array);
}
