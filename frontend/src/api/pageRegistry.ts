/**
 * The page registry as the backend froze it (`GET /api/pages`), read from the committed OpenAPI document's
 * `x-page-registry`: tests hold the frontend's cards and client actions to it. Not for the app bundle.
 */
import document from "./openapi.json";
import type { components } from "./schema";

export type PageRegistry = components["schemas"]["PagesRead"];

export const pageRegistry = (document as unknown as { "x-page-registry": PageRegistry })["x-page-registry"];
