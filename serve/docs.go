package serve

import (
	"embed"
	"path"

	"github.com/gofiber/fiber/v2"
)

// docsFiles is the API docs page: Swagger UI (vendored from the npm package
// swagger-ui-dist by scripts/vendor_swagger_ui.sh, checksums in
// docs/swagger-ui/SHA256SUMS) over openapi.json. Everything is in the
// binary, so the page works without a network.
//
//go:embed docs/index.html docs/init.js docs/swagger-ui/swagger-ui-bundle.js docs/swagger-ui/swagger-ui.css
var docsFiles embed.FS

// docsAssets maps the page's URLs to embedded files and content types.
var docsAssets = map[string]struct{ file, mime string }{
	"/docs":                      {"docs/index.html", fiber.MIMETextHTMLCharsetUTF8},
	"/docs/init.js":              {"docs/init.js", "text/javascript; charset=utf-8"},
	"/docs/swagger-ui-bundle.js": {"docs/swagger-ui/swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
	"/docs/swagger-ui.css":       {"docs/swagger-ui/swagger-ui.css", "text/css; charset=utf-8"},
}

// routeDocs serves the docs page without authentication, like /health: it
// holds no data, and the OpenAPI document it shows (/docs/openapi.json, the
// same bytes as /openapi.json) only describes the API. Calls made from the
// page carry the key the user enters.
func (s *Server) routeDocs() {
	for p, a := range docsAssets {
		body, err := docsFiles.ReadFile(a.file)
		if err != nil {
			panic("serve: docs asset " + path.Base(a.file) + " not embedded") // build error, caught by tests
		}
		mime := a.mime
		s.app.Get(p, func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, mime)
			c.Set(fiber.HeaderCacheControl, "no-cache")
			return c.Send(body)
		})
	}
	s.app.Get("/docs/openapi.json", s.handleOpenAPI)
}
