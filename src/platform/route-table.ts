// The routes the app serves, recorded as they are added, so that the route table can be walked
// (every route documented, every route with an id tenant-isolated) without a hand-kept list.
import type { FastifyInstance, FastifySchema } from 'fastify';

export interface RouteEntry {
  method: string;
  /** Fastify form, with `:param` segments. */
  url: string;
  public: boolean;
  /** A test helper: live keys are refused (config.testOnly). */
  testOnly: boolean;
  schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: readonly RouteEntry[];
  }
}

/** Starts recording; must run before any route is added. HEAD twins of GET routes are left out. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: route.url, public: route.config?.public === true, testOnly: route.config?.testOnly === true, schema: route.schema });
    }
  });
  app.decorate('routeTable', routes);
}
