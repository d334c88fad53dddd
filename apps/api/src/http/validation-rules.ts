import { getMetadataStorage, type MetadataStorage } from 'class-validator';

type Rules = ReturnType<MetadataStorage['getTargetValidationMetadatas']>;

let installed = false;

/**
 * Remembers each class's validation rules once resolved. class-validator looks a class's rules up for every object
 * it validates (each nested part of a document is one), and each lookup tests every decorated class of the service
 * for inheritance and filters their rules afresh (typestack/class-validator#2686, open): during a bulk ingest of
 * 20-part documents that was 37% of all the service's allocation (sampled heap profile, session 17), garbage that
 * lived as long as the requests waiting for their indexing and so reached the old generation.
 *
 * The rules of a class are all registered when its module loads, before any object of it can be validated; any
 * rule registered later (a class loaded later) clears what was remembered anyway. The executor only reads the list
 * it gets (it groups it into new arrays), so one list serves every lookup. Written here because the library has no
 * option for it; installed once, on the library's global storage, for every validation in the process.
 */
export function rememberValidationRules(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage();
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  let remembered = new WeakMap<object, Map<string, Rules>>();
  storage.addValidationMetadata = (m) => {
    remembered = new WeakMap();
    add(m);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema ?? ''}\u0000${always}\u0000${strictGroups}\u0000${groups ? groups.join('\u0001') : '\u0002'}`;
    let byOptions = remembered.get(target);
    if (!byOptions) remembered.set(target, (byOptions = new Map()));
    let rules = byOptions.get(key);
    if (!rules) byOptions.set(key, (rules = lookup(target, schema, always, strictGroups, groups)));
    return rules;
  };
}
