import type { Routes } from '../http/routes.ts';

export const optionsRoutes: Routes = async (_app, _options) => {};
