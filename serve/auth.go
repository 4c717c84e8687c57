package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/rerankd/rerankd/retrieval"
)

// keyring checks API keys in constant time: keys are compared as SHA-256
// digests, so neither length nor content leaks through timing, and every
// configured key is compared on each request.
type keyring struct {
	digests [][32]byte
	scopes  []scope // aligned with digests
}

func newKeyring(keys []string, scopes map[string][]string) *keyring {
	k := &keyring{}
	for _, key := range keys {
		k.digests = append(k.digests, sha256.Sum256([]byte(key)))
		k.scopes = append(k.scopes, newScope(scopes[key]))
	}
	return k
}

func (k *keyring) enabled() bool { return len(k.digests) > 0 }

// lookup returns the scope of key, comparing against every key.
func (k *keyring) lookup(key string) (scope, bool) {
	d := sha256.Sum256([]byte(key))
	found := -1
	for i, want := range k.digests {
		if subtle.ConstantTimeCompare(d[:], want[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return scope{}, false
	}
	return k.scopes[found], true
}

// scopeKey is where the middleware leaves the caller's scope.
const scopeKey = "rerankd.scope"

// middleware requires "Authorization: Bearer KEY". The 401 never says
// whether the header was missing, malformed or the key wrong.
func (k *keyring) middleware(c *fiber.Ctx) error {
	if !k.enabled() {
		return c.Next()
	}
	// The scheme is case-insensitive (RFC 9110 section 11.1): "bearer KEY"
	// is the same credential.
	scheme, key, found := strings.Cut(strings.TrimSpace(c.Get(fiber.HeaderAuthorization)), " ")
	found = found && strings.EqualFold(scheme, "Bearer")
	sc, ok := k.lookup(strings.TrimSpace(key))
	if !found || !ok {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="rerankd"`)
		return newError(KindUnauthorized, "missing or invalid API key")
	}
	c.Locals(scopeKey, sc)
	return c.Next()
}

// scopeOf is the scope the middleware left for the caller: the zero
// (unrestricted) scope without auth or for a key that has none.
func scopeOf(c *fiber.Ctx) scope {
	sc, _ := c.Locals(scopeKey).(scope)
	return sc
}

// check refuses namespace ns outside the scope.
func (s scope) check(ns string) error {
	// An invalid name is no namespace at all: let validation answer 422.
	valid := retrieval.ValidateNamespace(ns) == nil
	if !valid || s.allows(ns) {
		return nil
	}
	// 403, not 404: the key is valid, and saying "forbidden" for every
	// namespace outside the scope (existing or not) leaks nothing.
	return newError(KindForbidden, "this API key may not use namespace %q", ns)
}
