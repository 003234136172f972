// Swagger UI for /docs, bundled from swagger-ui-dist: no CDN, works offline, no inline script.
import "swagger-ui-dist/swagger-ui.css";
import SwaggerUIBundle from "swagger-ui-dist/swagger-ui-es-bundle.js";

SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
});
