import type { Routes } from '../http/routes.ts';

export const bundleDetailsRoutes: Routes = async (_app, _options) => {};
