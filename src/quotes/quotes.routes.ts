import type { Routes } from '../http/routes.ts';

export const quotesRoutes: Routes = async (_app, _options) => {};
