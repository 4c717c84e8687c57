// The API docs page: Swagger UI over this server's OpenAPI document. "Try
// it out" calls this same server; with API keys, enter one under
// "Authorize" (kept in this browser's local storage).
window.ui = SwaggerUIBundle({
  url: "/docs/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
});
