import type { Routes } from '../http/routes.ts';

export const priceBooksRoutes: Routes = async (_app, _options) => {};
