package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// keyring checks API keys in constant time: keys are compared as SHA-256
// digests, so neither length nor content leaks through timing, and every
// configured key is compared on each request.
type keyring struct{ digests [][32]byte }

func newKeyring(keys []string) *keyring {
	k := &keyring{}
	for _, key := range keys {
		k.digests = append(k.digests, sha256.Sum256([]byte(key)))
	}
	return k
}

func (k *keyring) enabled() bool { return len(k.digests) > 0 }

func (k *keyring) valid(key string) bool {
	d := sha256.Sum256([]byte(key))
	ok := 0
	for _, want := range k.digests {
		ok |= subtle.ConstantTimeCompare(d[:], want[:])
	}
	return ok == 1
}

// middleware requires "Authorization: Bearer KEY". The 401 never says
// whether the header was missing, malformed or the key wrong.
func (k *keyring) middleware(c *fiber.Ctx) error {
	if !k.enabled() {
		return c.Next()
	}
	h := c.Get(fiber.HeaderAuthorization)
	key, found := strings.CutPrefix(h, "Bearer ")
	if !found || !k.valid(strings.TrimSpace(key)) {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="rerankd"`)
		return newError(KindUnauthorized, "missing or invalid API key")
	}
	return c.Next()
}
