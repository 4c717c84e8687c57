package serve

import (
	"embed"
	"path"

	"github.com/gofiber/fiber/v2"
)

// docsFiles holds two pages, both in the binary so they work without a
// network: the API docs (docs/: Swagger UI over openapi.json, vendored from
// the npm package swagger-ui-dist by scripts/vendor_swagger_ui.sh with its
// license and checksums) and the search explorer (ui/: a page of our own
// over the public search API, where operators look at each stage's scores
// and choose thresholds).
//
//go:embed docs ui
var docsFiles embed.FS

// docsAssets maps the pages' URLs to embedded files and content types.
var docsAssets = map[string]struct{ file, mime string }{
	"/ui":                        {"ui/index.html", fiber.MIMETextHTMLCharsetUTF8},
	"/ui/ui.js":                  {"ui/ui.js", "text/javascript; charset=utf-8"},
	"/ui/ui.css":                 {"ui/ui.css", "text/css; charset=utf-8"},
	"/docs":                      {"docs/index.html", fiber.MIMETextHTMLCharsetUTF8},
	"/docs/init.js":              {"docs/init.js", "text/javascript; charset=utf-8"},
	"/docs/swagger-ui-bundle.js": {"docs/swagger-ui/swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
	"/docs/swagger-ui.css":       {"docs/swagger-ui/swagger-ui.css", "text/css; charset=utf-8"},
}

// routeDocs serves the docs page and the explorer without authentication,
// like /health: they hold no data (the explorer asks for a key and sends it
// with its searches), and the OpenAPI document it shows (/docs/openapi.json, the
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
			setPageHeaders(c)
			return c.Send(body)
		})
	}
	s.app.Get("/docs/openapi.json", s.handleOpenAPI)
}

// pageCSP lets the pages load only their own files and call only this
// server: no other origin's scripts, no plugins, no framing. Inline styles
// are allowed because Swagger UI sets style attributes from script, and
// data: images because its icons are inline SVG.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// setPageHeaders adds the headers that keep a page that shows memory text
// from being framed (clickjacking) or its files from being read as another
// type.
func setPageHeaders(c *fiber.Ctx) {
	c.Set("Content-Security-Policy", pageCSP)
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
}
