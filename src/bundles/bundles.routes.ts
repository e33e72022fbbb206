import type { Routes } from '../http/routes.ts';

export const bundlesRoutes: Routes = async (_app, _options) => {};
