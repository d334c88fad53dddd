/** The auth read models: row types, collections, the rows events make, and views. Loads no adapter or framework. */
export * from './grants';
export * from './users';
export * from './api-keys';
export * from './app-clients';
