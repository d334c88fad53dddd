/** The schedules read model: row types, collections, ids and views. Loads no use case, adapter or framework. */
export * from './schedules';
