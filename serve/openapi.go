package serve

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// openAPI is the committed OpenAPI 3 document of this API; a test checks
// its examples against the real handlers.
//
//go:embed openapi.json
var openAPI []byte

func (s *Server) handleOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(openAPI)
}
